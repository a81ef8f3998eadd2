import HTTPCore
import MenuModel
import MenuSessions

/// `GET /changes?since=R`: the splices that took the session from revision `R` to now, so a client
/// whose write got 412, or a second device, updates its cached rows instead of reloading them.
extension MenuAPI {
    /// The longest `wait` a long poll may ask for, in seconds.
    package static let maxWaitSeconds = 60

    /// `{"version":…,"revision":…,"changes":[{"revision":r,"change":{"at","inserted","removed"}|null},…]}`,
    /// oldest first; `410 gone` when the history no longer reaches `since`; `since` past the
    /// revision is `400 invalid_parameter`. Without a session: the default view, revision 0, no
    /// changes. A menu reload is an entry too, `{"revision":r,"reload":{"version","changes",
    /// "reconfigured"}}` (``FeedEntry``), after which positions belong to the new menu. The
    /// `version` is the menu the positions after the last entry belong to: a client holding rows
    /// of another version that no entry takes it from reloads them.
    ///
    /// With `wait=S` (1 to ``maxWaitSeconds``) and nothing after `since` yet, a long poll: the
    /// answer waits, holding no thread (``ChangeWaits``), until a write takes the session past
    /// `since` (then it carries that write), the session is deleted (`404`), or S seconds pass
    /// (the same empty list as without `wait`). Past `--max-streams` waits, `503 too_many_streams`.
    ///
    /// With `Accept: text/event-stream`, a stream of the same entries (``ChangeStream``), resumed
    /// from `Last-Event-ID` when the client sends one (it then takes the place of `since`).
    func changes(_ request: HTTPRequest) throws(APIError) -> HTTPReply {
        let wait = try Self.integerParameter("wait", in: request, default: 0, range: 0 ... Self.maxWaitSeconds)
        let streaming = request.method == "GET" && EventStreamRequest.wantsEventStream(request.headers)
        // Read (and a malformed one refused) on every GET, though only a stream resumes from it.
        let lastEventID = try EventStreamRequest.lastEventID(request.headers)
        let resumed = streaming ? lastEventID : nil
        let asked = try Self.integerParameter("since", in: request, default: -1, range: 0 ... Int.max)
        let since = resumed ?? asked
        guard since >= 0 else {
            throw .invalidParameter("since is required: the revision the client holds (GET /rows answers it)")
        }
        let session = try sessionID(in: request)
        if streaming { return .response(try changeStream(of: session, since: since, for: request)) }
        let (menu, changes) = try changesOrDefaultView(of: session, since: since, for: request)
        guard wait > 0, changes.entries?.isEmpty == true else {
            return .response(try changesResponse(menu, changes, since: since, for: request))
        }
        let deferred = DeferredResponse { [self] in
            do throws(APIError) {
                let (menu, changes) = try changesOrDefaultView(of: session, since: since, for: request)
                return try changesResponse(menu, changes, since: since, for: request)
            } catch {
                return errorResponse(error)
            }
        }
        let key: ChangeWaits.Key = session.map { .session($0) } ?? .defaultView
        switch changeWaits.register(key, since: since, for: .seconds(wait), deferred) {
        case .held: break
        case .full: throw .tooManyStreams(limit: changeWaits.limit)
        case .closed: return .response(try changesResponse(menu, changes, since: since, for: request))
        }
        // A write or a deletion between the first look and the registration notified no one: look again.
        if let session {
            do throws(APIError) {
                let (_, now) = try self.changes(of: session, since: since, for: request)
                if now.revision > since || now.entries == nil { changeWaits.notify(key, revision: Int.max) }
            } catch {
                changeWaits.end(key)
            }
        }
        return .deferred(deferred)
    }

    /// `GET /changes` as a `text/event-stream` (``ChangeStream``): its first look now (a session
    /// unknown, or `since` past its revision, is answered as without the stream), then held in
    /// ``changeWaits`` until it ends.
    private func changeStream(of session: SessionID?, since: Int, for request: HTTPRequest) throws(APIError)
        -> HTTPResponse
    {
        let (menu, changes) = try changesOrDefaultView(of: session, since: since, for: request)
        try Self.requireSince(since, within: changes)
        let stream = ChangeStream(
            key: session.map { .session($0) } ?? .defaultView, since: since,
            versionJSON: menu.versionText, revision: changes.revision,
            entries: changes.entries, heartbeat: streamHeartbeat
        ) { [self] since in
            do throws(APIError) {
                // Not the stream's own request: its headers would stay in memory as long as the stream.
                let (menu, changes) = try changesOrDefaultView(of: session, since: since, for: Self.streamLook)
                return .changes(versionJSON: menu.versionText, revision: changes.revision, entries: changes.entries)
            } catch {
                switch error {
                case .unknownSession, .invalidSession: return .ended(.sessionEnded)
                case .stopping: return .ended(.serverStopping)
                default: return .ended(.storeUnavailable)
                }
            }
        }
        switch changeWaits.register(stream) {
        case .held: break
        case .full:
            stream.body.connectionEnded()
            throw .tooManyStreams(limit: changeWaits.limit)
        case .closed:
            stream.body.connectionEnded()
            throw .stopping
        }
        stream.changed()  // a write between the first look and the registration notified no one
        return HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"),
                // nginx (and proxies that honour it) pass each event on at once instead of buffering.
                ("X-Accel-Buffering", "no")
            ], stream: stream.body)
    }

    /// The request a stream's later looks read the store for: no header (no `If-None-Match`).
    private static let streamLook = HTTPRequest(method: "GET", path: "/changes")

    /// The served menu and the changes of `session` (nil: the default view) since `since`, each
    /// reload's splices computed.
    private func changesOrDefaultView(of session: SessionID?, since: Int, for request: HTTPRequest) throws(APIError)
        -> (
            ServedMenu, FeedChanges
        )
    {
        guard let session else { return (current, FeedChanges(revision: 0, entries: since == 0 ? [] : nil)) }
        let (menu, changes) = try changes(of: session, since: since, for: request)
        return (menu, FeedChanges(changes, on: menu.generation, versionJSON: menu.versionText))
    }

    /// The answer to `GET /changes?since=` for `changes` on `menu` (see ``changes(_:)``).
    private func changesResponse(_ menu: ServedMenu, _ changes: FeedChanges, since: Int, for request: HTTPRequest)
        throws(APIError) -> HTTPResponse
    {
        try Self.requireSince(since, within: changes)
        guard let entries = changes.entries else { throw .gone(since: since, revision: changes.revision) }
        let locale = try negotiatedLocale(for: request, on: menu)
        var writer = JSONWriter(capacity: 64 + entries.reduce(0) { $0 + $1.encodedBound })
        writer.raw("{\"version\":")
        writer.raw(menu.versionJSON)
        writer.raw(",\"revision\":")
        writer.integer(changes.revision)
        writer.raw(",\"changes\":[")
        for (index, entry) in entries.enumerated() {
            if index > 0 { writer.raw(",") }
            entry.write(to: &writer)
        }
        writer.raw("]}")
        return json(200, writer.finish(), extraHeaders: menu.languageHeaders(locale))
    }

    /// Refuses a `since` past the session's revision (the list and the stream alike).
    private static func requireSince(_ since: Int, within changes: FeedChanges) throws(APIError) {
        guard since <= changes.revision else {
            throw .invalidParameter("since \(since) is past the session's revision \(changes.revision)")
        }
    }

    /// `{"at":…,"inserted":…,"removed":…}` or `null`.
    static func write(_ change: RowChange?, to writer: inout JSONWriter) {
        guard let change else {
            writer.raw("null")
            return
        }
        writer.raw("{\"at\":")
        writer.integer(change.at)
        writer.raw(",\"inserted\":")
        writer.integer(change.inserted)
        writer.raw(",\"removed\":")
        writer.integer(change.removed)
        writer.raw("}")
    }
}
