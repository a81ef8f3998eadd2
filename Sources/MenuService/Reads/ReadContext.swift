import HTTPCore
import MenuAvailability
import MenuModel
import MenuSessions

/// One read's inputs, decided once before anything is written: the menu served, the session's
/// snapshot on it (the default expansion at revision 0 when no session is named), the locale
/// negotiated, and the search query of a filtered read. The view, the filtered view and the
/// entity tag are made from these here and nowhere else, so whatever shapes what a read shows
/// shapes its tag too.
///
/// Invariant: `locale` indexes `menu`'s locales; `session.state` is a state of `menu`; the tag
/// names `menu`'s version, `locale` (on a menu with locales), the availability overlay's revision
/// once it changed (``ServedAvailability``), `query` (``MenuAPI/queryTagPart(_:)``) and
/// `session.revision`.
/// Cost: making one is the session's look-up and the locale's negotiation, and for a filtered
/// read the query's hash and one small array (its tag); ``view`` is a ``FlattenedView`` over the
/// shared menu.
struct ReadContext {
    let menu: ServedMenu
    let session: SessionSnapshot
    let locale: Int
    /// The query of `/rows` or `/count` with `q` or `filter`, and of `/search`; nil otherwise.
    let query: SearchQuery?
    /// The strong tag of this read: the locale's prefix, the query's part for a filtered read,
    /// and the revision.
    let tag: SessionEntityTag

    init(menu: ServedMenu, session: SessionSnapshot, locale: Int, query: SearchQuery?) {
        self.menu = menu
        self.session = session
        self.locale = locale
        self.query = query
        let prefix = menu.availability.readTagPrefixes[locale]
        tag = SessionEntityTag(
            prefix: query.map { prefix + MenuAPI.queryTagPart($0) } ?? prefix, revision: session.revision)
    }

    /// The session's tree as rows (the unfiltered view).
    var view: FlattenedView { FlattenedView(menu: menu.generation.menu, state: session.state) }

    /// The selection fields of this read's rows: the session's selection, and what is unavailable.
    var rowSelection: RowSelection {
        RowSelection(
            session.state.selection, in: menu.generation.menu, unavailableLeaves: menu.availability.unavailableLeaves)
    }

    /// The filtered view of ``query`` (cached for every session; 429 when too many are being built).
    func filteredView(slots: SearchBuildSlots) throws(APIError) -> FilteredView {
        guard let query else { preconditionFailure("a filtered view of a read without a query") }
        return try menu.filteredView(for: query, slots: slots)
    }

    /// `Content-Language` and `Vary` of a read in ``locale`` (none for a menu without locales).
    var languageHeaders: [(name: String, value: String)] { menu.languageHeaders(locale) }
}

extension MenuAPI {
    /// The read context of `request`: the session `X-Session-Id` names (or the default view), the
    /// locale `?lang=` or `Accept-Language` asks for, and `query` when the read is filtered.
    /// With `?at=<RFC 3339>` the menu shows the availability at that instant instead of now
    /// (``ServedMenu/at(_:)``): what will be orderable then.
    func readContext(of request: HTTPRequest, query: SearchQuery? = nil) throws(APIError) -> ReadContext {
        let at = try Self.instantParameter(in: request)
        let (served, session) = try servedState(for: request)
        var menu = served
        if let at {
            guard let then = served.at(at, slots: searchSlots) else { throw .instantBusy(builds: searchSlots.limit) }
            menu = then
        }
        return ReadContext(
            menu: menu, session: session, locale: try negotiatedLocale(for: request, on: menu), query: query)
    }

    /// `?at=`: an RFC 3339 instant (`2026-12-24T19:30:00+01:00`; a space where the offset's `+`
    /// was sent unencoded is read as `+`), or nil when not given.
    static func instantParameter(in request: HTTPRequest) throws(APIError) -> Timestamp? {
        let query = request.query
        guard let position = query.firstIndex(named: "at") else { return nil }
        let hint = "at must be an RFC 3339 instant such as 2026-12-24T19:30:00Z or 2026-12-24T19:30:00%2B01:00"
        guard query.count(named: "at") == 1 else { throw .invalidParameter("at given more than once; " + hint) }
        guard let text = query.value(at: position), text.utf8.count <= Timestamp.maxLength else {
            throw .invalidParameter(hint)
        }
        do throws(Timestamp.Malformed) {
            return try Timestamp(rfc3339: Self.offsetSignRestored(text))
        } catch {
            throw .invalidParameter("\(hint); \(error.reason)")
        }
    }

    /// `text` with a space after the seconds read as `+`: a query's unencoded `+` arrives as a
    /// space, and only an offset's sign can stand there (a space between date and time stays).
    package static func offsetSignRestored(_ text: String) -> String {
        var bytes = Array(text.utf8)
        guard bytes.count > 19, let last = bytes.lastIndex(of: UInt8(ascii: " ")), last >= 19 else { return text }
        bytes[last] = UInt8(ascii: "+")
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The read context of the session `id` (which must exist: `unknown_session` otherwise).
    func readContext(ofSession id: SessionID, _ request: HTTPRequest) throws(APIError) -> ReadContext {
        let (menu, session) = try snapshot(of: id, for: request)
        return ReadContext(
            menu: menu, session: session, locale: try negotiatedLocale(for: request, on: menu), query: nil)
    }

    /// `304 Not Modified` (`ETag`, `Cache-Control` and `Vary`; no `Content-Language`, no body)
    /// when `request`'s `If-None-Match` names `context`'s tag or is `*`; nil when it sends none or
    /// names other tags. O(1) without the header.
    func notModified(_ request: HTTPRequest, _ context: ReadContext) throws(APIError) -> HTTPResponse? {
        guard try EntityTagCondition.noneMatchFails(in: request, current: context.tag) == true else { return nil }
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(Self.readHeaderRoom)
        headers.append(("ETag", context.tag.headerValue))
        headers.append(("Cache-Control", Self.readCacheControl))
        headers.append(("Vary", context.menu.readVary))
        return HTTPResponse(status: 304, headers: headers)
    }
}
