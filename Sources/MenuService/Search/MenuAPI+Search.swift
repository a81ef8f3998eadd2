import HTTPCore
import MenuModel
import MenuSessions

/// Search (`GET /search`) and the filtered tree (`GET /rows` and `/count` with `q` or `filter`).
///
/// Both answer from the menu's filtered view of the query (``ServedMenu/filteredView(for:slots:)``:
/// cached for every session), so neither reads or changes the session's expansion beyond its
/// snapshot: a match's `index` in `/search` is where the session's own view shows it (null when
/// a collapsed group hides it; `POST /nodes/{id}/reveal` shows it), and leaving `q` and `filter`
/// out of `/rows` gives the session's own tree as it was.
///
/// Titles are in the negotiated locale (`?lang=`, `Accept-Language`), as rows are.
///
/// Entity tags: a filtered page or count carries `"<version>-[<locale>-]s<hash>-<revision>"`,
/// the hash (FNV-1a, 64 bits) of the folded query and filters, so a tag of one query never
/// validates another's rows or the unfiltered tree (whose tag has no `s` part); the revision stays
/// the digits after the last `-`, so `If-Match` on a write takes a filtered page's tag as the
/// session's revision. `/search` answers carry no tag (`Cache-Control: no-store`).
extension MenuAPI {
    /// The page size of `/search` when the request names no `limit`.
    package static let defaultSearchLimit = 20

    func search(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        guard let query = try SearchParameters.query(of: request) else {
            throw .invalidQuery(SearchQueryError.nothingAsked.description)
        }
        let offset = try Self.integerParameter("offset", in: request, default: 0, range: 0 ... Int.max)
        let limit = try Self.integerParameter(
            "limit", in: request, default: min(Self.defaultSearchLimit, maxLimit), range: 1 ... maxLimit)
        let context = try readContext(of: request, query: query)
        let filtered = try context.filteredView(slots: searchSlots)
        let (view, locale) = (context.view, context.locale)
        let matches = filtered.matches
        let page = offset < matches.count ? matches[offset ..< offset + min(limit, matches.count - offset)] : []
        var writer = JSONWriter(capacity: 256 + page.count * 256)
        writeOpening(revision: context.session.revision, of: context.menu, to: &writer)
        writeQuery(query, to: &writer)
        writer.raw(",\"total\":")
        writer.integer(matches.count)
        writePlace(offset: offset, limit: limit, to: &writer)
        writer.raw(",\"matches\":[")
        for (position, match) in page.enumerated() {
            let node = Int(match)
            writer.raw(position == 0 ? "{\"id\":" : ",{\"id\":")
            writeIDAndTitle(of: node, in: view.menu, locale: locale, to: &writer)
            writer.raw(",\"isGroup\":")
            writer.bool(view.menu.isGroup(node))
            writer.raw(",\"index\":")
            if let index = view.index(ofNode: node) { writer.integer(index) } else { writer.raw("null") }
            writer.raw(",\"path\":[")
            for (step, ancestor) in view.ancestors(of: node).enumerated() {
                writer.raw(step == 0 ? "{\"id\":" : ",{\"id\":")
                writeIDAndTitle(of: ancestor, in: view.menu, locale: locale, to: &writer)
                writer.raw("}")
            }
            writer.raw("]}")
        }
        writer.raw("]}")
        return json(200, writer.finish(), extraHeaders: context.languageHeaders)
    }

    /// `/rows` with `q` or `filter`: a page of the filtered tree, the usual answer plus `query`
    /// and `"filtered":true`. Offsets only (`after`, `before` and `around` name rows of the
    /// filtered view too).
    func filteredRows(_ request: HTTPRequest, _ query: SearchQuery, anchor: PageAnchor, limit: Int) throws(APIError)
        -> HTTPResponse
    {
        let ancestors = try Self.booleanParameter("ancestors", in: request, default: false)
        let context = try readContext(of: request, query: query)
        let filtered = try context.filteredView(slots: searchSlots)
        if let unchanged = try notModified(request, context) { return unchanged }
        let (offset, pageRows) = try anchor.page(in: filtered, limit: limit)
        let rowCount = max(0, min(pageRows, filtered.count - offset))
        var writer = JSONWriter(capacity: 256 + rowCount * 160)
        writeFilteredCounts(filtered, query: query, revision: context.session.revision, of: context.menu, to: &writer)
        writePlace(offset: offset, limit: limit, to: &writer)
        writer.raw(",\"rows\":")
        let (encoded, marks) = (context.menu.encoded[context.locale], context.menu.availability.marks)
        encoded.writeRows(
            of: filtered, offset: offset, limit: pageRows, marks: marks, selection: context.rowSelection, to: &writer)
        if ancestors {
            writer.raw(",\"ancestors\":")
            encoded.writeAncestorRows(
                of: filtered, above: offset, marks: marks, selection: context.rowSelection, to: &writer)
        }
        writer.raw("}")
        return read(writer.finish(), context)
    }

    /// `/count` with `q` or `filter`: the filtered tree's counts.
    func filteredCount(_ request: HTTPRequest, _ query: SearchQuery) throws(APIError) -> HTTPResponse {
        let context = try readContext(of: request, query: query)
        let filtered = try context.filteredView(slots: searchSlots)
        if let unchanged = try notModified(request, context) { return unchanged }
        var writer = JSONWriter(capacity: 160)
        writeFilteredCounts(filtered, query: query, revision: context.session.revision, of: context.menu, to: &writer)
        writer.raw("}")
        return read(writer.finish(), context)
    }

    /// `{"version","revision","count","leafCount","query","filtered":true` (object left open).
    private func writeFilteredCounts(
        _ view: FilteredView, query: SearchQuery, revision: Int, of menu: ServedMenu, to writer: inout JSONWriter
    ) {
        writeCounts(count: view.count, leafCount: view.leafCount, revision: revision, of: menu, to: &writer)
        writeQuery(query, to: &writer)
        writer.raw(",\"filtered\":true")
    }

    /// `,"query":` and the text as given (null for filters alone).
    private func writeQuery(_ query: SearchQuery, to writer: inout JSONWriter) {
        writer.raw(",\"query\":")
        if let text = query.text { writer.string(text) } else { writer.raw("null") }
    }

    /// The id (its key already written) and `,"title":` of `node`.
    private func writeIDAndTitle(of node: Menu.Node, in menu: Menu, locale: Int, to writer: inout JSONWriter) {
        writer.string(menu.id(of: node))
        writer.raw(",\"title\":")
        writer.string(menu.title(of: node, locale: locale))
    }

    /// The length of ``queryTagPart(_:)``: `s`, 16 hex digits, `-`.
    static let queryTagPartLength = 18

    /// `s`, 16 hex digits of the FNV-1a hash of the folded text and each filter (lengths before
    /// bytes, so no two queries write the same bytes), and `-`. The same on every server.
    static func queryTagPart(_ query: SearchQuery) -> [UInt8] {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        }
        func addLength(_ length: Int) { withUnsafeBytes(of: UInt64(length).littleEndian) { add($0) } }
        addLength(query.folded.count)
        add(query.folded)
        for filter in query.filters {
            addLength(filter.name.utf8.count)
            add(filter.name.utf8)
            addLength(filter.value.utf8.count)
            add(filter.value.utf8)
        }
        let hex = Array("0123456789abcdef".utf8)
        return [UInt8(ascii: "s")] + (0 ..< 16).map { hex[Int(hash >> UInt64(60 - 4 * $0) & 15)] } + [UInt8(ascii: "-")]
    }
}
