import MenuModel

/// A change a client asks for: flip a group, or set it (idempotent).
package enum ExpansionCommand: Sendable, Equatable {
    case toggle(groupID: String)
    case set(groupID: String, isExpanded: Bool)
}

/// What a store returns for an applied command: the session (new when none was given), the
/// change for the client, and the session's state after it.
package struct AppliedChange: Sendable {
    package var sessionID: SessionID
    package var created: Bool
    package var change: ExpansionChange
    package var state: ExpansionState

    package init(sessionID: SessionID, created: Bool, change: ExpansionChange, state: ExpansionState) {
        self.sessionID = sessionID
        self.created = created
        self.change = change
        self.state = state
    }
}

/// Why a session store refused a request.
package enum SessionStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The id is well-formed but names no live session (never issued, expired or deleted).
    case unknownSession
    /// The store holds its maximum number of sessions, none of them idle long enough to evict.
    case tooManySessions(limit: Int, retryAfterSeconds: Int)
    /// The change would make the session hold more than `limit` changed groups.
    case tooManyChanges(limit: Int)
    /// The change names no group or a row.
    case expansion(ExpansionError)
    /// The store cannot accept writes now (disk full, storage down); nothing was changed.
    case unavailable(reason: String)

    package var description: String {
        switch self {
        case .unknownSession: "unknown session"
        case .tooManySessions(let limit, _): "the server holds its limit of \(limit) sessions"
        case .tooManyChanges(let limit): "the session already holds its limit of \(limit) changed groups"
        case .expansion(let error): error.description
        case .unavailable(let reason): "session storage unavailable: \(reason)"
        }
    }
}

/// Keeps every client's ``ExpansionState`` outside the shared menu.
///
/// Contract: each operation on one session is atomic and linearizable; operations on different
/// sessions do not wait for each other beyond a short shard lock; a write that returns has been
/// accepted by the store's durability policy.
package protocol SessionStore: Sendable {
    /// Creates a session in the default expansion.
    func create() throws(SessionStoreError) -> SessionID
    /// Deletes a session; `unknownSession` when there is none.
    func delete(_ id: SessionID) throws(SessionStoreError)
    /// The session's current state.
    func state(of id: SessionID) throws(SessionStoreError) -> ExpansionState
    /// Applies `command` atomically to the session `id`, or to a new session when `id` is nil.
    func apply(_ command: ExpansionCommand, to id: SessionID?) throws(SessionStoreError) -> AppliedChange
}
