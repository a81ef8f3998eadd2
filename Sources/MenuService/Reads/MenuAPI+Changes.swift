import HTTPCore
import MenuAvailability
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
        let given = try Self.integerParameter("availabilitySince", in: request, default: -1, range: 0 ... Int.max)
        let availabilitySince = given >= 0 ? given : nil
        let session = try sessionID(in: request)
        if streaming {
            return .response(
                try changeStream(of: session, since: since, availabilitySince: availabilitySince, for: request))
        }
        let (menu, changes, availability) = try feed(
            of: session, since: since, availabilitySince: availabilitySince, for: request)
        // Behind another instance (``FeedChanges/onALaterMenu``): held until this one serves the menu too.
        guard wait > 0, changes.entries?.isEmpty == true || changes.onALaterMenu, availability == nil else {
            return .response(try changesResponse(menu, changes, availability, since: since, for: request))
        }
        let deferred = DeferredResponse { [self] in
            do throws(APIError) {
                let (menu, changes, availability) = try feed(
                    of: session, since: since, availabilitySince: availabilitySince, for: request)
                return try changesResponse(menu, changes, availability, since: since, for: request)
            } catch {
                return errorResponse(error)
            }
        }
        let key: ChangeWaits.Key = session.map { .session($0) } ?? .defaultView
        switch changeWaits.register(key, since: since, for: .seconds(wait), deferred) {
        case .held: break
        case .full: throw .tooManyStreams(limit: changeWaits.limit)
        case .closed: return .response(try changesResponse(menu, changes, availability, since: since, for: request))
        }
        // A change of availability between the first look and the registration released no one.
        if let availabilitySince, current.availability.overlay.revision != availabilitySince {
            changeWaits.notify(key, revision: Int.max)
        }
        // A write or a deletion between the first look and the registration notified no one: look again.
        if let session {
            do throws(APIError) {
                let (_, now) = try self.changes(of: session, since: since, for: request)
                if !now.onALaterMenu, now.revision > since || now.entries == nil {
                    changeWaits.notify(key, revision: Int.max)
                }
            } catch {
                changeWaits.end(key)
            }
        }
        return .deferred(deferred)
    }

    /// `GET /changes` as a `text/event-stream` (``ChangeStream``): its first look now (a session
    /// unknown, or `since` past its revision, is answered as without the stream), then held in
    /// ``changeWaits`` until it ends.
    private func changeStream(
        of session: SessionID?, since: Int, availabilitySince: Int?, for request: HTTPRequest
    ) throws(APIError) -> HTTPResponse {
        let (menu, changes, availability) = try feed(
            of: session, since: since, availabilitySince: availabilitySince, for: request)
        try Self.requireSince(since, within: changes)
        let stream = ChangeStream(
            key: session.map { .session($0) } ?? .defaultView, since: since,
            versionJSON: menu.versionText, revision: changes.revision,
            entries: changes.entries, heartbeat: streamHeartbeat,
            availabilityRevision: availability?.revision ?? availabilitySince ?? menu.availability.overlay.revision,
            availability: availability
        ) { [self] since, availabilitySince in
            do throws(APIError) {
                // Not the stream's own request: its headers would stay in memory as long as the stream.
                let (menu, changes, availability) = try feed(
                    of: session, since: since, availabilitySince: availabilitySince, for: Self.streamLook)
                if changes.onALaterMenu { return .notYet }
                return .changes(
                    versionJSON: menu.versionText, revision: changes.revision, entries: changes.entries,
                    availabilityRevision: menu.availability.overlay.revision, availability: availability)
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

    /// ``changesOrDefaultView(of:since:for:)`` and, for a client at availability revision
    /// `availabilitySince`, the rows to fetch again after a change of availability
    /// (``availabilityEntry(since:on:session:revision:)``; none while the history is gone).
    private func feed(of session: SessionID?, since: Int, availabilitySince: Int?, for request: HTTPRequest)
        throws(APIError) -> (ServedMenu, FeedChanges, AvailabilityFeedEntry?)
    {
        let (menu, changes) = try changesOrDefaultView(of: session, since: since, for: request)
        guard changes.entries != nil else { return (menu, changes, nil) }
        return (
            menu, changes,
            availabilityEntry(since: availabilitySince, on: menu, session: session, revision: changes.revision)
        )
    }

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
    private func changesResponse(
        _ menu: ServedMenu, _ changes: FeedChanges, _ availability: AvailabilityFeedEntry?, since: Int,
        for request: HTTPRequest
    ) throws(APIError) -> HTTPResponse {
        try Self.requireSince(since, within: changes)
        guard let entries = changes.entries else { throw .gone(since: since, revision: changes.revision) }
        let locale = try negotiatedLocale(for: request, on: menu)
        var writer = JSONWriter(
            capacity: 96 + entries.reduce(0) { $0 + $1.encodedBound } + (availability?.encodedBound ?? 0))
        writer.raw("{\"version\":")
        writer.raw(menu.versionJSON)
        writer.raw(",\"revision\":")
        writer.integer(changes.revision)
        writeAvailabilityRevision(of: menu, to: &writer)
        writer.raw(",\"changes\":[")
        for (index, entry) in entries.enumerated() {
            if index > 0 { writer.raw(",") }
            entry.write(to: &writer)
        }
        writer.raw("]")
        if let availability {
            writer.raw(",\"availability\":")
            availability.write(to: &writer)
        }
        writer.raw("}")
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
