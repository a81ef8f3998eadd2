import HTTPCore
import MenuModel
import MenuSessions

/// Portable sessions (issue 13 §6): `GET /session` answers the expansion of the session
/// `X-Session-Id` names by id, not by position, and `POST /sessions` creates a session from that
/// form. A client that keeps it recovers from `unknown_session` (expiry, eviction, a memory-only restart) by creating a session
/// in the same state, across menu reloads and instances, and two devices share a layout.
extension MenuAPI {
    /// `{"version","sessionId","revision","expansion":{"base","marks":[{"id","mode"}],
    /// "expanded":[ids],"collapsed":[ids]},"selection":{"all","toggled":[ids]}}`, marks, flips and
    /// toggles in menu order. A session read as `/count` is: its tag is the menu version
    /// and the revision (which fix the answer), `If-None-Match` with it answers 304, and it is
    /// `private, no-cache`. O(k) for k marks and flips.
    func session(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let id = try requiredSessionID(in: request)
        let context = try readContext(ofSession: id, request)
        if let unchanged = try notModified(request, context) { return unchanged }
        let (menu, session) = (context.menu, context.session)
        let portable = session.state.portable(in: menu.generation.menu)
        var writer = JSONWriter(
            capacity: 200 + (portable.marks.count + portable.flips.count + portable.selection.toggled.count) * 48)
        writer.raw("{\"version\":")
        writer.raw(menu.versionJSON)
        writer.raw(",\"sessionId\":")
        writer.string(id.text)
        writer.raw(",\"revision\":")
        writer.integer(session.revision)
        writer.raw(",\"expansion\":{\"base\":")
        writer.string(portable.base.rawValue)
        writer.raw(",\"marks\":[")
        for (position, mark) in portable.marks.enumerated() {
            writer.raw(position == 0 ? "{\"id\":" : ",{\"id\":")
            writer.string(mark.id)
            writer.raw(",\"mode\":")
            writer.string(mark.mode.rawValue)
            writer.raw("}")
        }
        writer.raw("],\"expanded\":")
        Self.writeIDs(portable.flips.filter(\.isExpanded).map(\.id), to: &writer)
        writer.raw(",\"collapsed\":")
        Self.writeIDs(portable.flips.filter { !$0.isExpanded }.map(\.id), to: &writer)
        writer.raw("},\"selection\":{\"all\":")
        writer.bool(portable.selection.all)
        writer.raw(",\"toggled\":")
        Self.writeIDs(portable.selection.toggled, to: &writer)
        writer.raw("}}")
        return read(writer.finish(), context)
    }

    /// `DELETE /session`: ends the session `X-Session-Id` names (204).
    func deleteSession(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let id = try requiredSessionID(in: request)
        do { try store.delete(id) } catch { throw APIError(error) }
        changeWaits.end(.session(id))  // long polls of it answer 404
        return HTTPResponse(status: 204, headers: [("Cache-Control", "no-store")])
    }

    /// The session `X-Session-Id` names, for a route whose subject it is: ``sessionID(in:)``, and
    /// 400 `missing_session` without the header.
    func requiredSessionID(in request: HTTPRequest) throws(APIError) -> SessionID {
        guard let id = try sessionID(in: request) else { throw .missingSession }
        return id
    }

    /// `POST /sessions`: a session in the state the body describes (no body: the default state),
    /// on the menu served now. `{"sessionId","revision":0,"ignored":[ids]}`, the ids that name no
    /// group of this menu (unknown, or a row) in the order given; a flip equal to what its mode
    /// gives is dropped silently. A state with more entries than the change limit is
    /// `too_many_changes`. O(n) for a body of n bytes, plus the state's build.
    func createSession(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let portable = try Self.parsePortableExpansionBody(request.body)
        try admitCreation(request)
        let (_, (id, ignored)) = try onServedMenu { menu throws(SessionStoreError) -> (SessionID, [String]) in
            var ignored: [String] = []
            let state = SessionState(portable: portable, in: menu.generation.menu, ignoredIDs: &ignored)
            return (try store.create(in: menu.generation, state: state), ignored)
        }
        var writer = JSONWriter(capacity: 64 + ignored.count * 32)
        writer.raw("{\"sessionId\":")
        writer.string(id.text)
        writer.raw(",\"revision\":0,\"ignored\":")
        Self.writeIDs(ignored, to: &writer)
        writer.raw("}")
        return json(201, writer.finish(), extraHeaders: [("X-Session-Id", id.text)])
    }

    /// The portable expansion of a `POST /sessions` body (``PortableExpansionBodyParser``); an
    /// empty body is the default expansion.
    package static func parsePortableExpansionBody(_ body: [UInt8]) throws(APIError) -> PortableState {
        do {
            return try PortableExpansionBodyParser.parse(body)
        } catch {
            throw .invalidBody(error.message)
        }
    }
}
