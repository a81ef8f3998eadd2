import MenuModel

/// A change a client asks for: flip a group, set it (idempotent), or expand every collapsed
/// group enclosing a node (idempotent).
package enum ExpansionCommand: Sendable, Equatable {
    case toggle(groupID: String)
    case set(groupID: String, isExpanded: Bool)
    case reveal(nodeID: String)
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
    /// The session was already carried over to a newer menu than the one the call named (a
    /// reload happened while the request ran): nothing was changed; call again with the current
    /// menu. Callers retry; it never reaches a client.
    case menuChanged

    package var description: String {
        switch self {
        case .unknownSession: "unknown session"
        case .tooManySessions(let limit, _): "the server holds its limit of \(limit) sessions"
        case .tooManyChanges(let limit): "the session already holds its limit of \(limit) changed groups"
        case .expansion(let error): error.description
        case .unavailable(let reason): "session storage unavailable: \(reason)"
        case .menuChanged: "the menu was reloaded while the request ran"
        }
    }
}

/// Keeps every client's ``ExpansionState`` outside the shared menu.
///
/// Contract: each operation on one session is atomic and linearizable; operations on different
/// sessions do not wait for each other beyond a short shard lock; a write that returns has been
/// accepted by the store's durability policy.
///
/// Menus change (a reload). Every call that reads or writes a state names the ``MenuGeneration``
/// the caller serves, and gets a state for exactly that menu: a session still on an older menu is
/// carried over first (by id, ``ExpansionState/rebased(from:to:)``); a session already on a newer
/// one answers ``SessionStoreError/menuChanged`` and changes nothing, and the caller starts again
/// on its current menu. ``adopt(_:)`` carries every session over in the background.
package protocol SessionStore: Sendable {
    /// The newest menu the store has been handed (by ``adopt(_:)`` or by any call).
    var currentMenu: MenuGeneration { get }
    /// Creates a session in the default expansion.
    func create(in menu: MenuGeneration) throws(SessionStoreError) -> SessionID
    /// Deletes a session; `unknownSession` when there is none.
    func delete(_ id: SessionID) throws(SessionStoreError)
    /// The session's current state, on `menu`.
    func state(of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> ExpansionState
    /// Applies `command` atomically to the session `id`, or to a new session when `id` is nil,
    /// on `menu`.
    func apply(_ command: ExpansionCommand, to id: SessionID?, in menu: MenuGeneration) throws(SessionStoreError) -> AppliedChange
    /// Makes `menu` the store's newest and carries every session over to it, shard by shard,
    /// never holding more than one shard's lock; returns when done (call it off the request path).
    @discardableResult
    func adopt(_ menu: MenuGeneration) -> SessionRebaseReport
}

extension SessionStore {
    /// ``create(in:)`` on the store's newest menu.
    package func create() throws(SessionStoreError) -> SessionID {
        try onCurrentMenu { menu throws(SessionStoreError) in try create(in: menu) }
    }

    /// ``state(of:in:)`` on the store's newest menu.
    package func state(of id: SessionID) throws(SessionStoreError) -> ExpansionState {
        try onCurrentMenu { menu throws(SessionStoreError) in try state(of: id, in: menu) }
    }

    /// ``apply(_:to:in:)`` on the store's newest menu.
    package func apply(_ command: ExpansionCommand, to id: SessionID?) throws(SessionStoreError) -> AppliedChange {
        try onCurrentMenu { menu throws(SessionStoreError) in try apply(command, to: id, in: menu) }
    }

    /// Runs `body` on the newest menu, again on the newer one while it answers `.menuChanged`.
    private func onCurrentMenu<Result>(_ body: (MenuGeneration) throws(SessionStoreError) -> Result) throws(SessionStoreError) -> Result {
        while true {
            do {
                return try body(currentMenu)
            } catch .menuChanged {
                continue
            }
        }
    }
}

extension ExpansionCommand {
    /// Applies the command to `view`, turning the model's error into the store's. A change that
    /// would take the groups changed past `maxChangedGroups` is undone and refused
    /// (`.tooManyChanges`); changes that do not add a changed group are always allowed.
    /// O(depth · (log m + s)), as ``FlattenedView/setExpanded(_:_:)``.
    package func run(on view: inout FlattenedView, maxChangedGroups: Int) throws(SessionStoreError) -> ExpansionChange {
        try runListingGroups(on: &view, maxChangedGroups: maxChangedGroups).change
    }

    /// ``run(on:maxChangedGroups:)``, also answering each group the command set and the state it
    /// set it to (what a journal records; a group already in that state may be among them for a
    /// toggle or a set, never for a reveal): the one group of a toggle or a set, the collapsed
    /// ancestors of a reveal, from the top down. O(depth · (log m + s)).
    package func runListingGroups(on view: inout FlattenedView, maxChangedGroups: Int) throws(SessionStoreError)
        -> (change: ExpansionChange, groupsSet: [(id: String, isExpanded: Bool)]) {
        let before = view.state.changedGroupCount
        let change: ExpansionChange
        var revealed: [Menu.Node] = []
        do {
            switch self {
            case .toggle(let groupID): change = try view.toggle(groupID)
            case .set(let groupID, let isExpanded): change = try view.setExpanded(groupID, isExpanded)
            case .reveal(let nodeID):
                if let node = view.menu.node(withID: nodeID) { revealed = view.collapsedAncestors(of: node) }
                change = try view.reveal(nodeID)
            }
        } catch {
            throw .expansion(error)
        }
        let groupsSet: [(id: String, isExpanded: Bool)] = if case .reveal = self {
            revealed.map { (view.menu.id(of: $0), true) }
        } else {
            [(change.id, change.isExpanded)]
        }
        if view.state.changedGroupCount > max(before, maxChangedGroups) {
            for group in groupsSet { _ = try? view.setExpanded(group.id, !group.isExpanded) }  // back as it was
            throw .tooManyChanges(limit: maxChangedGroups)
        }
        return (change, groupsSet)
    }
}
