import MenuModel

/// Keeps every client's ``SessionState`` outside the shared menu.
///
/// Contract: each operation on one session is atomic and linearizable; operations on different
/// sessions do not wait for each other beyond a short shard lock; a write that returns has been
/// accepted by the store's durability policy.
///
/// Menus change (a reload). Every call that reads or writes a state names the ``MenuGeneration``
/// the caller serves, and gets a state for exactly that menu: a session still on an older menu is
/// carried over first (by id, ``SessionState/rebased(from:to:)``); a session already on a newer
/// one answers ``SessionStoreError/menuChanged`` and changes nothing, and the caller starts again
/// on its current menu. ``adopt(_:)`` carries every session over in the background.
package protocol SessionStore: Sendable {
    /// The newest menu the store has been handed (by ``adopt(_:)`` or by any call).
    var currentMenu: MenuGeneration { get }
    /// Creates a session holding `state`, a state of `menu` (the default expansion, or one built
    /// from a client's portable form), at revision 0. A state with more entries than the store's
    /// change limit is refused (`.tooManyChanges`).
    func create(in menu: MenuGeneration, state: SessionState) throws(SessionStoreError) -> SessionID
    /// Deletes a session; `unknownSession` when there is none.
    func delete(_ id: SessionID) throws(SessionStoreError)
    /// The session's current state, on `menu`, and its revision.
    func snapshot(of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> SessionSnapshot
    /// Applies `command` atomically to the session `id`, or to a new session when `id` is nil
    /// (which stands at revision 0 until then), on `menu`. With `condition`, the session's
    /// revision is checked under the same lock as the write: one it does not admit answers
    /// `.revisionMismatch` and changes nothing.
    func apply(
        _ command: SessionCommand, to id: SessionID?, in menu: MenuGeneration,
        if condition: RevisionCondition?
    ) throws(SessionStoreError) -> AppliedChange
    /// The session's revision and its splices since revision `since`, on `menu` (nil entries when
    /// the history does not reach back to `since`, or `since` is past the revision).
    func changes(of id: SessionID, since: Int, in menu: MenuGeneration) throws(SessionStoreError) -> SessionChanges
    /// ``snapshot(of:in:)`` of a session the caller knows to be at `revision` or later (the
    /// revision of a tag the client sent in `If-None-Match` or `If-Match`): a store that caches
    /// sessions of a shared backend fetches the session when its cached revision is older, so a
    /// client that wrote through another instance never reads a state older than its own write.
    /// Stores that hold the only copy answer ``snapshot(of:in:)``.
    func snapshot(of id: SessionID, in menu: MenuGeneration, atLeast revision: Int) throws(SessionStoreError)
        -> SessionSnapshot
    /// Whether ``snapshot(of:in:atLeast:)`` may answer otherwise than ``snapshot(of:in:)`` (a
    /// store caching a shared backend); false for a store holding the only copy, whose callers
    /// then need not look for the revision a client knows.
    var refreshesCopies: Bool { get }
    /// Whether a session carried over to a new menu gets a reload entry in its changes feed
    /// (``ReloadMark``), so the service keeps the previous menu until the next reload to compute
    /// its splices from; false for a store whose feed forgets at a reload (`410` before it).
    var recordsReloads: Bool { get }
    /// Why the store cannot serve requests now (its backend unreachable), or nil when it can: the
    /// readiness a load balancer asks for (`GET /readyz`). Never blocks longer than the store's
    /// own timeout.
    func readinessProblem() -> String?
    /// Calls `observer` when another process changed or removed a session this store holds a copy
    /// of (`.session`), or when it may have missed such news (`.everything`: its link to the shared
    /// backend was lost or renewed). Stores of this process alone never call it: every write of
    /// theirs goes through this process. One observer, set once before requests; it runs on the
    /// store's own thread and must not block.
    func observeOtherWriters(_ observer: @escaping @Sendable (OtherWriterNews) -> Void)
    /// Makes `menu` the store's newest and carries every session over to it, shard by shard,
    /// never holding more than one shard's lock; returns when done (call it off the request path).
    @discardableResult
    func adopt(_ menu: MenuGeneration) -> SessionRebaseReport
}

/// What a store shared with other processes learns of their writes (``SessionStore/observeOtherWriters(_:)``).
package enum OtherWriterNews: Sendable, Equatable {
    /// The session was written or removed elsewhere.
    case session(SessionID)
    /// News may have been missed: any session may have changed.
    case everything
}

extension SessionStore {
    /// A store holding the only copy of its sessions has no older copy to refresh.
    package func snapshot(of id: SessionID, in menu: MenuGeneration, atLeast revision: Int) throws(SessionStoreError)
        -> SessionSnapshot
    {
        try snapshot(of: id, in: menu)
    }

    /// A store holding the only copy of its sessions has no older copy to refresh.
    package var refreshesCopies: Bool { false }

    /// Unless a store says otherwise, its feed forgets at a reload.
    package var recordsReloads: Bool { false }

    /// A store in this process alone has no other writers.
    package func observeOtherWriters(_ observer: @escaping @Sendable (OtherWriterNews) -> Void) {}

    /// A store in this process is ready whenever the process is.
    package func readinessProblem() -> String? { nil }

    /// Creates a session in the default expansion on `menu`.
    package func create(in menu: MenuGeneration) throws(SessionStoreError) -> SessionID {
        try create(in: menu, state: SessionState())
    }

    /// ``create(in:)`` on the store's newest menu.
    package func create() throws(SessionStoreError) -> SessionID {
        try onCurrentMenu { menu throws(SessionStoreError) in try create(in: menu) }
    }

    /// The session's state on `menu` (``snapshot(of:in:)`` without the revision).
    package func state(of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> SessionState {
        try snapshot(of: id, in: menu).state
    }

    /// ``snapshot(of:in:)`` on the store's newest menu.
    package func snapshot(of id: SessionID) throws(SessionStoreError) -> SessionSnapshot {
        try onCurrentMenu { menu throws(SessionStoreError) in try snapshot(of: id, in: menu) }
    }

    /// ``state(of:in:)`` on the store's newest menu.
    package func state(of id: SessionID) throws(SessionStoreError) -> SessionState {
        try snapshot(of: id).state
    }

    /// An unconditional ``apply(_:to:in:if:)``.
    package func apply(_ command: SessionCommand, to id: SessionID?, in menu: MenuGeneration)
        throws(SessionStoreError) -> AppliedChange
    {
        try apply(command, to: id, in: menu, if: nil)
    }

    /// ``apply(_:to:in:if:)`` on the store's newest menu.
    package func apply(
        _ command: SessionCommand, to id: SessionID?,
        if condition: RevisionCondition? = nil
    ) throws(SessionStoreError) -> AppliedChange {
        try onCurrentMenu { menu throws(SessionStoreError) in try apply(command, to: id, in: menu, if: condition) }
    }

    /// Runs `body` on the newest menu, again on the newer one while it answers `.menuChanged`.
    private func onCurrentMenu<Result>(_ body: (MenuGeneration) throws(SessionStoreError) -> Result)
        throws(SessionStoreError) -> Result
    {
        while true {
            do {
                return try body(currentMenu)
            } catch .menuChanged {
                continue
            }
        }
    }
}
