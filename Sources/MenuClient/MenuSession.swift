import Foundation

/// What an app stores between launches to get its session back: the id and the portable layout.
public struct MenuSessionSnapshot: Sendable, Hashable, Codable {
    public var sessionID: String?
    public var layout: MenuLayout?
    public init(sessionID: String?, layout: MenuLayout?) {
        self.sessionID = sessionID
        self.layout = layout
    }
}

/// A new session made in place of one the server no longer has (`unknown_session`: a restart
/// without `--data-dir`, expiry, eviction, a `DELETE`), from the portable layout last seen.
public struct MenuSessionRecreation: Sendable, Hashable {
    public var oldID: String
    public var newID: String
    /// False when no layout was known: the new session shows the menu's default expansion.
    public var layoutRestored: Bool
    /// Ids in the layout the menu no longer has as groups (the server's `ignored`).
    public var ignored: [String]
}

/// One client session on a menu-server: creates its session on first use, remembers the id,
/// keeps its portable layout (``layout``, by group id, from `GET /session`), and on
/// `unknown_session` creates a new one from that layout (``recreate(replacing:)``).
///
/// Invariant: ``id`` is the last id the server issued to this object (or was given at init);
/// one creation runs at a time, so concurrent first uses share one session. Every call is one
/// HTTP exchange (two for a recreation that falls back to replaying nothing).
public actor MenuSession {
    public nonisolated let configuration: MenuClientConfiguration
    let http: MenuHTTP
    public private(set) var id: String?
    /// The layout as the server last stated it; nil until ``refreshLayout()`` succeeds.
    public private(set) var layout: MenuLayout?
    /// The locale the server answered the session's last successful read in (its
    /// `Content-Language`, as the menu's config spells it; writes answer without one); nil for a
    /// menu without locales. Part of the entity tags of a menu with locales
    /// (`"<version>-<locale>-<revision>"`), which ``MenuTable`` sends in `If-Match` and `If-None-Match`.
    public private(set) var contentLanguage: String?
    private var creating: Task<MenuSessionCreatedAnswer, any Error>?

    /// `language`, when given, replaces the configuration's ``MenuClientConfiguration/language``
    /// (sent as `Accept-Language` on every request of the session).
    public init(
        configuration: MenuClientConfiguration, restoring snapshot: MenuSessionSnapshot? = nil, language: String? = nil
    ) {
        var configuration = configuration
        if let language { configuration.language = language }
        self.configuration = configuration
        http = MenuHTTP(configuration: configuration)
        id = snapshot?.sessionID
        layout = snapshot?.layout
    }

    /// What to store to get this session back after a relaunch (``init(configuration:restoring:)``).
    public var snapshot: MenuSessionSnapshot { MenuSessionSnapshot(sessionID: id, layout: layout) }

    /// The session's id, creating the session (`POST /sessions`, with ``layout`` when known) on first use.
    public func ensureID() async throws(MenuClientError) -> String {
        if let id { return id }
        let created = try await create(layout: layout)
        return created.sessionId
    }

    /// Creates a session; concurrent callers share the one creation.
    private func create(layout: MenuLayout?) async throws(MenuClientError) -> MenuSessionCreatedAnswer {
        if let creating { return try await Self.value(of: creating) }
        let task = Task { [http] () throws -> MenuSessionCreatedAnswer in
            let body = try layout.map { try JSONEncoder().encode($0) }
            let answer = try await http.send("POST", "sessions", json: body)
            guard answer.status == 201 else { throw answer.error }
            return try answer.decode(MenuSessionCreatedAnswer.self)
        }
        creating = task
        defer { creating = nil }
        let created = try await Self.value(of: task)
        id = created.sessionId
        return created
    }

    private static func value(of task: Task<MenuSessionCreatedAnswer, any Error>) async throws(MenuClientError)
        -> MenuSessionCreatedAnswer
    {
        do {
            return try await task.value
        } catch let error as MenuClientError {
            throw error
        } catch {
            throw .invalidArgument("cannot encode the layout: \(error)")
        }
    }

    /// Replaces `failedID` (which the server answered `unknown_session` for) by a new session made
    /// from ``layout``. Nil when another caller already replaced it (the table then just reloads).
    public func recreate(replacing failedID: String) async throws(MenuClientError) -> MenuSessionRecreation? {
        guard id == failedID else { return nil }
        id = nil
        let created = try await create(layout: layout)
        return MenuSessionRecreation(
            oldID: failedID, newID: created.sessionId, layoutRestored: layout != nil,
            ignored: created.ignored ?? [])
    }

    /// Reads the session's portable layout (`GET /session`, the id in `X-Session-Id`, never in the
    /// URL) into ``layout``. A server without that route (404 `not_found`, or 405 where only
    /// `DELETE` is routed) leaves ``layout`` as it was.
    @discardableResult
    public func refreshLayout() async throws(MenuClientError) -> MenuLayout? {
        let id = try await ensureID()
        let answer = try await http.send("GET", "session", headers: [("X-Session-Id", id)])
        if answer.status == 405 || (answer.status == 404 && answer.error.code == "not_found") { return layout }
        guard answer.status == 200 else { throw answer.error }
        let state = try answer.decode(MenuSessionStateAnswer.self)
        if self.id == id { layout = state.layout }
        return state.layout
    }

    /// Ends the session on the server (`DELETE /session`, the id in `X-Session-Id`); the next use
    /// creates a new one.
    public func delete() async throws(MenuClientError) {
        guard let id else { return }
        let answer = try await http.send("DELETE", "session", headers: [("X-Session-Id", id)])
        guard answer.status == 204 || answer.error.code == "unknown_session" else { throw answer.error }
        if self.id == id {
            self.id = nil
            layout = nil
        }
    }

    /// One request naming this session (created first when needed); the id sent comes back with
    /// the answer so that a caller seeing `unknown_session` knows which id failed.
    /// A `text/event-stream` of `GET /changes?since=` for the session (created first when it has
    /// no id yet), resuming after `lastEventID` when given; not yet started.
    func changeStream(since revision: Int, availabilitySince: Int, lastEventID: String?, idleTimeout: TimeInterval)
        async throws(MenuClientError)
        -> (stream: MenuEventStream, sessionID: String)
    {
        let id = try await ensureID()
        var headers = [("X-Session-Id", id), ("Accept", "text/event-stream")]
        if let lastEventID, !lastEventID.isEmpty { headers.append(("Last-Event-ID", lastEventID)) }
        let request = try http.urlRequest(
            "GET", "changes", query: [("since", String(revision)), ("availabilitySince", String(availabilitySince))],
            headers: headers)
        return (MenuEventStream(request: request, lastEventID: lastEventID ?? "", idleTimeout: idleTimeout), id)
    }

    func send(
        _ method: String, _ path: String, query: [(String, String)] = [], headers: [(String, String)] = [],
        json body: Data? = nil
    ) async throws(MenuClientError) -> (answer: MenuHTTPAnswer, sessionID: String) {
        let id = try await ensureID()
        let answer = try await http.send(
            method, path, query: query, headers: headers + [("X-Session-Id", id)], json: body)
        if method == "GET", answer.status < 400 { contentLanguage = answer.headers["content-language"] }
        return (answer, id)
    }
}
