import HTTPCore
import MenuModel
import MenuSessions

/// The search a request asks for through its `q` and `filter` query parameters (both as
/// libmicrohttpd percent-decoded them; invalid UTF-8 becomes U+FFFD and simply matches nothing).
///
/// `q` at most once, 1 to ``SearchQuery/maxLength`` characters (400 `invalid_query`); `filter`
/// any number of times up to ``SearchQuery/maxFilters``, each `ATTR:VALUE` (400 `invalid_filter`).
/// Cost: one pass over the query parameters; a `q` over ``maxQueryBytes`` bytes is refused before
/// it becomes a `String`, so the work per request is bounded whatever a client sends.
enum SearchParameters {
    /// More UTF-8 bytes than 200 characters of a query can reasonably take (a character of a
    /// script with combining marks may take several scalars).
    static let maxQueryBytes = 4 * 1024

    /// The search `request` asks for; nil when it names neither `q` nor `filter`.
    static func query(of request: HTTPRequest) throws(APIError) -> SearchQuery? {
        let query = request.query
        var text: String?
        var filters: [AttributeFilter] = []
        var filterCount = 0
        for position in query.indices {
            if query.name(at: position, equals: "q") {
                guard text == nil else { throw .invalidQuery("q given more than once; give one query text") }
                let length = query.withValue(at: position) { $0?.count ?? 0 }
                guard length <= maxQueryBytes else { throw invalid(.textTooLong(characters: length)) }
                text = query.value(at: position) ?? ""
            } else if query.name(at: position, equals: "filter") {
                filterCount += 1
                guard filterCount <= SearchQuery.maxFilters else {
                    throw invalid(.tooManyFilters(count: query.count(named: "filter")))
                }
                do {
                    filters.append(try AttributeFilter(parsing: query.value(at: position) ?? ""))
                } catch {
                    throw invalid(error)
                }
            }
        }
        guard text != nil || !filters.isEmpty else { return nil }
        do {
            return try SearchQuery(text: text, filters: filters)
        } catch {
            throw invalid(error)
        }
    }

    /// The service's error for a refused search: `invalid_filter` for the filters, else `invalid_query`.
    static func invalid(_ error: SearchQueryError) -> APIError {
        error.isAboutFilters ? .invalidFilter(error.description) : .invalidQuery(error.description)
    }
}

extension ServedMenu {
    /// The filtered view of `query` on this menu, from the cache shared by every session or built
    /// (``SearchIndex/view(for:in:)``) in one of `slots` and kept. 400 `invalid_filter` for an
    /// attribute the menu lacks, checked first, so a wrong filter is told so even when every
    /// slot is taken; 503 `busy` for a miss while every slot is.
    func filteredView(for query: SearchQuery, slots: SearchBuildSlots) throws(APIError) -> FilteredView {
        let menu = generation.menu
        do throws(SearchQueryError) {
            try searchIndex.checkFilters(of: query)
        } catch {
            throw SearchParameters.invalid(error)
        }
        return try searchCache.view(for: query) { () throws(APIError) in
            let built = try slots.run { () throws(APIError) in
                do throws(SearchQueryError) {
                    return try searchIndex.view(for: query, in: menu)
                } catch {
                    throw SearchParameters.invalid(error)
                }
            }
            guard let built else { throw .searchBusy(builds: slots.limit) }
            return built
        }
    }
}
