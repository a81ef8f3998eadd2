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
    /// The `Cache-Control` of a session read and its 304 (a literal: no lazy global to check).
    static var readCacheControl: String { "private, no-cache" }

    /// Room a read's header array is made with: its own five at most, and the ones the layers
    /// around the service add (`X-Request-Id`, the CORS headers), so that no append reallocates.
    static var readHeaderRoom: Int { 8 }

    /// A 200 session read of `context` with its tag and caching headers (`Vary`, and
    /// `Content-Language` for a menu with locales: ``ServedMenu/localeHeaders``).
    func read(_ body: ResponseBody, _ context: ReadContext) -> HTTPResponse {
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(Self.readHeaderRoom)
        headers.append(("ETag", context.tag.headerValue))
        headers.append(("Content-Type", "application/json; charset=utf-8"))
        headers.append(("Cache-Control", Self.readCacheControl))
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
