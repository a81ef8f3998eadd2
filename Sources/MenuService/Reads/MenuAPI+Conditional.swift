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
extension MenuAPI {
    /// The headers of a 200 session read, after its `ETag` and before its locale's headers.
    private static let readHeaders: [(name: String, value: String)] = [
        ("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "private, no-cache")
    ]

    /// A 200 session read of `context` with its tag and caching headers (`Vary`, and
    /// `Content-Language` for a menu with locales: ``ServedMenu/localeHeaders``).
    func read(_ body: ResponseBody, _ context: ReadContext) -> HTTPResponse {
        // One allocation: room for the locale's one or two headers reserved up front.
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(5)
        headers.append(("ETag", context.tag.headerValue))
        headers.append(contentsOf: Self.readHeaders)
        headers.append(contentsOf: context.menu.localeHeaders[context.locale])
        return HTTPResponse(status: 200, headers: headers, body: body)
    }

    /// The `If-Match` of a write, parsed once; ``EntityTagCondition/revisionCondition(prefix:)``
    /// turns it into the store's condition on the menu the write runs on.
    func writeCondition(of request: HTTPRequest) throws(APIError) -> EntityTagCondition? {
        guard request.headers.firstIndex(named: "if-match") != nil else { return nil }
        return try EntityTagCondition.parse("if-match", of: request, named: "If-Match")
    }
}
