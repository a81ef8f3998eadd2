import HTTPCore
import MenuSessions

/// Conditional requests (RFC 9110 §13) and the caching headers of the session reads.
///
/// `GET`/`HEAD /rows` and `/count` carry a strong ``SessionEntityTag`` of the menu version and
/// the session's revision, `Cache-Control: private, no-cache` (any cache must revalidate; no
/// shared cache may keep a session's rows) and `Vary: X-Session-Id` (the header that picks the
/// session). An `If-None-Match` naming the current tag answers `304 Not Modified` from the
/// revision alone, before any row is encoded. Every write takes `If-Match`, checked by the store
/// atomically with the write.
extension MenuService {
    /// The headers of a 200 session read, after its `ETag` and before its locale's headers.
    private static let readHeaders: [(name: String, value: String)] = [
        ("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "private, no-cache"),
    ]

    /// A 200 session read in `locale` of `menu` with its tag and caching headers (`Vary`, and
    /// `Content-Language` for a menu with locales: ``ServedMenu/localeHeaders``).
    func read(_ body: ResponseBody, tag: SessionEntityTag, locale: Int, of menu: ServedMenu) -> HTTPResponse {
        // One allocation: room for the locale's one or two headers reserved up front.
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(5)
        headers.append(("ETag", tag.headerValue))
        headers.append(contentsOf: Self.readHeaders)
        headers.append(contentsOf: menu.localeHeaders[locale])
        return HTTPResponse(status: 200, headers: headers, body: body)
    }

    /// The tag of `session`'s state on `menu` read in `locale`.
    func entityTag(of session: SessionSnapshot, on menu: ServedMenu, locale: Int) -> SessionEntityTag {
        SessionEntityTag(prefix: menu.entityTagPrefixes[locale], revision: session.revision)
    }

    /// `304 Not Modified` (`ETag`, `Cache-Control` and `Vary`; no `Content-Language`, no body)
    /// when `request`'s `If-None-Match` names `tag` or is `*`; nil when it sends none or names
    /// other tags. O(1) without the header.
    func notModified(_ request: HTTPRequest, tag: SessionEntityTag, locale: Int, of menu: ServedMenu) throws(APIError) -> HTTPResponse? {
        guard try EntityTagCondition.noneMatchFails(in: request, current: tag) == true else { return nil }
        var headers = menu.notModifiedHeaders[locale]
        headers[0].value = tag.headerValue
        return HTTPResponse(status: 304, headers: headers)
    }

    /// The `If-Match` of a write, parsed once; ``EntityTagCondition/revisionCondition(prefix:)``
    /// turns it into the store's condition on the menu the write runs on.
    func writeCondition(of request: HTTPRequest) throws(APIError) -> EntityTagCondition? {
        guard request.headers.firstIndex(named: "if-match") != nil else { return nil }
        return try EntityTagCondition.parse("if-match", of: request, named: "If-Match")
    }
}
