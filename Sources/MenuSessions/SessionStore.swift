import MenuModel

/// A change a client asks for: flip a group, set it (idempotent), set it and every group under
/// it (idempotent), set the whole tree (idempotent), or expand every collapsed group enclosing a
/// node (idempotent).
package enum ExpansionCommand: Sendable, Equatable {
    case toggle(groupID: String)
    case set(groupID: String, isExpanded: Bool)
    /// The group and every group of its subtree: one mark, whatever the subtree's size.
    case setSubtree(groupID: String, isExpanded: Bool)
    /// Every group follows `mode` (`.default`: the config's defaults, a new session's state).
    case setAll(ExpansionMode)
    case reveal(nodeID: String)

    /// Whether the command may replace a whole subtree or the whole state at once (a store
    /// journals the resulting state rather than single groups).
    package var isBulk: Bool {
        switch self {
        case .setSubtree, .setAll: true
        case .toggle, .set, .reveal: false
        }
    }
}

/// What a command did to the table, for the client: the change object of a command on one group
/// or node, or the whole-table reset of ``ExpansionCommand/setAll(_:)``.
package enum CommandChange: Sendable, Equatable {
    case group(ExpansionChange)
    case all(ExpansionResetChange)

    /// The splice of the table (nil when no visible row changed).
    package var splice: RowChange? {
        switch self {
        case .group(let change): change.change
        case .all(let reset): reset.change
        }
    }

    /// The change of a command on one group or node; nil for a whole-tree reset.
    package var groupChange: ExpansionChange? {
        if case .group(let change) = self { change } else { nil }
    }
}

/// What a store returns for an applied command: the session (new when none was given), the
/// change for the client, and the session's state and revision after it.
package struct AppliedChange: Sendable {
    package var sessionID: SessionID
    package var created: Bool
    package var change: CommandChange
    package var state: ExpansionState
    /// The session's ``SessionSnapshot/revision`` after the command (unchanged by a no-op).
    package var revision: Int

    package init(sessionID: SessionID, created: Bool, change: CommandChange, state: ExpansionState, revision: Int) {
        self.sessionID = sessionID
        self.created = created
        self.change = change
        self.state = state
        self.revision = revision
    }
}

/// A session as one read sees it: its state on the menu the read named, and its revision.
///
/// Invariant: `revision` is 0 when the session is created and grows by exactly 1 with every
/// write that changes the state (a hidden group toggled counts); a no-op write, a read and a
/// reload's carry-over leave it as it is. The anonymous default view is revision 0.
package struct SessionSnapshot: Sendable, Equatable {
    package var state: ExpansionState
    package var revision: Int

    package init(state: ExpansionState, revision: Int) {
        self.state = state
        self.revision = revision
    }
}

/// The revisions a conditional write (`If-Match`) accepts the session at: the store checks it
/// atomically with the write and refuses with ``SessionStoreError/revisionMismatch(current:)``
/// otherwise, changing nothing. Holds at most the few tags a client listed.
package struct RevisionCondition: Sendable, Equatable {
    package var accepted: [Int]

    package init(accepting accepted: [Int]) {
        self.accepted = accepted
    }

    package func admits(_ revision: Int) -> Bool { accepted.contains(revision) }
}

/// Why a session store refused a request.
package enum SessionStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The id is well-formed but names no live session (never issued, expired or deleted).
    case unknownSession
    /// The store holds its maximum number of sessions, none of them idle long enough to evict.
    case tooManySessions(limit: Int, retryAfterSeconds: Int)
    /// The change would make the session hold more than `limit` changed groups.
    case tooManyChanges(limit: Int)
    /// The change (or a new session's state) would make the session's state hold more than
    /// `limit` bytes (``SessionLimits/maxStateBytes``).
    case sessionTooLarge(limit: Int)
    /// The sessions held fill the byte budget (`budget`, ``SessionLimits/sessionMemory``) and
    /// none has been idle long enough to evict; the oldest will be in `retryAfterSeconds`.
    case sessionMemoryFull(budget: Int, retryAfterSeconds: Int)
    /// The change names no group or a row.
    case expansion(ExpansionError)
    /// The store cannot serve the call now (disk full, storage down); `reason` says whether a
    /// write may still land (a shared backend that timed out) or surely did not.
    case unavailable(reason: String)
    /// The session was already carried over to a newer menu than the one the call named (a
    /// reload happened while the request ran): nothing was changed; call again with the current
    /// menu. Callers retry; it never reaches a client.
    case menuChanged
    /// A conditional write found the session at `current`, a revision its ``RevisionCondition``
    /// does not accept (another client wrote first): nothing was changed.
    case revisionMismatch(current: Int)

    package var description: String {
        switch self {
        case .unknownSession: "unknown session"
        case .tooManySessions(let limit, _): "the server holds its limit of \(limit) sessions"
        case .tooManyChanges(let limit): "the session already holds its limit of \(limit) changed groups"
        case .sessionTooLarge(let limit): "the session's state would take more than its limit of \(limit) bytes"
        case .sessionMemoryFull(let budget, _): "the sessions held fill the session memory budget of \(budget) bytes"
        case .expansion(let error): error.description
        case .unavailable(let reason): "session storage unavailable: \(reason)"
        case .menuChanged: "the menu was reloaded while the request ran"
        case .revisionMismatch(let current): "the session is at revision \(current), not the one the write expected"
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
    /// Creates a session holding `state`, a state of `menu` (the default expansion, or one built
    /// from a client's portable form), at revision 0. A state with more entries than the store's
    /// change limit is refused (`.tooManyChanges`).
    func create(in menu: MenuGeneration, state: ExpansionState) throws(SessionStoreError) -> SessionID
    /// Deletes a session; `unknownSession` when there is none.
    func delete(_ id: SessionID) throws(SessionStoreError)
    /// The session's current state, on `menu`, and its revision.
    func snapshot(of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> SessionSnapshot
    /// Applies `command` atomically to the session `id`, or to a new session when `id` is nil
    /// (which stands at revision 0 until then), on `menu`. With `condition`, the session's
    /// revision is checked under the same lock as the write: one it does not admit answers
    /// `.revisionMismatch` and changes nothing.
    func apply(_ command: ExpansionCommand, to id: SessionID?, in menu: MenuGeneration,
               if condition: RevisionCondition?) throws(SessionStoreError) -> AppliedChange
    /// The session's revision and its splices since revision `since`, on `menu` (nil entries when
    /// the history does not reach back to `since`, or `since` is past the revision).
    func changes(of id: SessionID, since: Int, in menu: MenuGeneration) throws(SessionStoreError) -> SessionChanges
    /// ``snapshot(of:in:)`` of a session the caller knows to be at `revision` or later (the
    /// revision of a tag the client sent in `If-None-Match` or `If-Match`): a store that caches
    /// sessions of a shared backend fetches the session when its cached revision is older, so a
    /// client that wrote through another instance never reads a state older than its own write.
    /// Stores that hold the only copy answer ``snapshot(of:in:)``.
    func snapshot(of id: SessionID, in menu: MenuGeneration, atLeast revision: Int) throws(SessionStoreError) -> SessionSnapshot
    /// Why the store cannot serve requests now (its backend unreachable), or nil when it can: the
    /// readiness a load balancer asks for (`GET /readyz`). Never blocks longer than the store's
    /// own timeout.
    func readinessProblem() -> String?
    /// Makes `menu` the store's newest and carries every session over to it, shard by shard,
    /// never holding more than one shard's lock; returns when done (call it off the request path).
    @discardableResult
    func adopt(_ menu: MenuGeneration) -> SessionRebaseReport
}

extension SessionStore {
    /// A store holding the only copy of its sessions has no older copy to refresh.
    package func snapshot(of id: SessionID, in menu: MenuGeneration, atLeast revision: Int) throws(SessionStoreError) -> SessionSnapshot {
        try snapshot(of: id, in: menu)
    }

    /// A store in this process is ready whenever the process is.
    package func readinessProblem() -> String? { nil }

    /// Creates a session in the default expansion on `menu`.
    package func create(in menu: MenuGeneration) throws(SessionStoreError) -> SessionID {
        try create(in: menu, state: ExpansionState())
    }

    /// ``create(in:)`` on the store's newest menu.
    package func create() throws(SessionStoreError) -> SessionID {
        try onCurrentMenu { menu throws(SessionStoreError) in try create(in: menu) }
    }

    /// The session's state on `menu` (``snapshot(of:in:)`` without the revision).
    package func state(of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> ExpansionState {
        try snapshot(of: id, in: menu).state
    }

    /// ``snapshot(of:in:)`` on the store's newest menu.
    package func snapshot(of id: SessionID) throws(SessionStoreError) -> SessionSnapshot {
        try onCurrentMenu { menu throws(SessionStoreError) in try snapshot(of: id, in: menu) }
    }

    /// ``state(of:in:)`` on the store's newest menu.
    package func state(of id: SessionID) throws(SessionStoreError) -> ExpansionState {
        try snapshot(of: id).state
    }

    /// An unconditional ``apply(_:to:in:if:)``.
    package func apply(_ command: ExpansionCommand, to id: SessionID?, in menu: MenuGeneration) throws(SessionStoreError) -> AppliedChange {
        try apply(command, to: id, in: menu, if: nil)
    }

    /// ``apply(_:to:in:if:)`` on the store's newest menu.
    package func apply(_ command: ExpansionCommand, to id: SessionID?,
                       if condition: RevisionCondition? = nil) throws(SessionStoreError) -> AppliedChange {
        try onCurrentMenu { menu throws(SessionStoreError) in try apply(command, to: id, in: menu, if: condition) }
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
    /// What ``run(on:maxChangedGroups:)`` did: the change for the client, whether the state
    /// changed (a revision), and each group a toggle, a set or a reveal set with the state it set
    /// it to (what a journal records for them; empty for a bulk command, whose journal record is
    /// the resulting state).
    package struct Outcome: Sendable {
        package var change: CommandChange
        package var changedState: Bool
        package var groupsSet: [(id: String, isExpanded: Bool)]
    }

    /// Applies the command to `view`, turning the model's error into the store's. A change that
    /// would take the state's entries (``ExpansionState/changedGroupCount``) past
    /// `maxChangedGroups` is undone and refused (`.tooManyChanges`), and so is one that would take
    /// its heap bytes (``ExpansionState/heapBytes``) past `maxStateBytes` (`.sessionTooLarge`);
    /// changes that add neither entries nor bytes are always allowed.
    ///
    /// Cost: a toggle, a set or a reveal O(depth · (log m + s)), as ``FlattenedView/setExpanded(_:_:)``,
    /// and whether it changed the state is read off the entry count in O(1) (a flip always moves
    /// it; a reveal changed it exactly when it opened a group). A bulk command keeps the state
    /// before it (O(1), copied on write) and compares: O(k) for k entries, which it clears anyway.
    package func run(on view: inout FlattenedView, maxChangedGroups: Int,
                     maxStateBytes: Int = .max) throws(SessionStoreError) -> Outcome {
        let before = view.state.changedGroupCount
        let bytesBefore = maxStateBytes == .max ? 0 : view.state.heapBytes
        /// Whether the state now breaks a cap it kept before the change.
        func overCap(_ state: ExpansionState) -> SessionStoreError? {
            if state.changedGroupCount > max(before, maxChangedGroups) { return .tooManyChanges(limit: maxChangedGroups) }
            if maxStateBytes != .max, state.heapBytes > max(bytesBefore, maxStateBytes) { return .sessionTooLarge(limit: maxStateBytes) }
            return nil
        }
        switch self {
        case .setAll(let mode):
            let changed = view.state != ExpansionState(base: mode)
            return Outcome(change: .all(view.setAll(mode)), changedState: changed, groupsSet: [])
        case .setSubtree(let groupID, let isExpanded):
            let old = view.state
            let change: ExpansionChange
            do { change = try view.setExpanded(groupID, isExpanded, recursive: true) } catch { throw .expansion(error) }
            if let refusal = overCap(view.state) {
                view = FlattenedView(menu: view.menu, state: old)
                throw refusal
            }
            return Outcome(change: .group(change), changedState: view.state != old, groupsSet: [])
        case .toggle, .set, .reveal:
            let change: ExpansionChange
            var revealed: [Menu.Node] = []
            do {
                switch self {
                case .toggle(let groupID): change = try view.toggle(groupID)
                case .set(let groupID, let isExpanded): change = try view.setExpanded(groupID, isExpanded)
                case .reveal(let nodeID):
                    if let node = view.menu.node(withID: nodeID) { revealed = view.collapsedAncestors(of: node) }
                    change = try view.reveal(nodeID)
                case .setSubtree, .setAll: preconditionFailure("handled above")
                }
            } catch {
                throw .expansion(error)
            }
            let groupsSet: [(id: String, isExpanded: Bool)] = if case .reveal = self {
                revealed.map { (view.menu.id(of: $0), true) }
            } else {
                [(change.id, change.isExpanded)]
            }
            if let refusal = overCap(view.state) {
                for group in groupsSet { _ = try? view.setExpanded(group.id, !group.isExpanded) }  // back as it was
                // Arrays that grew for the refused change keep their capacity: give it back.
                if maxStateBytes != .max, view.state.heapBytes > bytesBefore {
                    view = FlattenedView(menu: view.menu, state: view.state.compacted)
                }
                throw refusal
            }
            // A toggle or a set flips one group or none, and a flip always moves the count; a
            // reveal changed the state exactly when it opened a group (its splice), even if its
            // flips added and removed as many entries.
            let changed = if case .reveal = self { change.change != nil } else { before != view.state.changedGroupCount }
            return Outcome(change: .group(change), changedState: changed, groupsSet: groupsSet)
        }
    }
}

extension ExpansionCommand {
    /// Whether the command may make a session's state larger: all but a whole-tree reset, which
    /// leaves a state of no entries.
    package var mayGrowState: Bool {
        if case .setAll = self { false } else { true }
    }
}

extension ExpansionState {
    /// The state a new session keeps, in arrays of exactly its size (``compacted``), after checking
    /// it against the store's caps: `.tooManyChanges` past `maxChangedGroups` entries,
    /// `.sessionTooLarge` past `maxStateBytes`. O(entries).
    package func checkedForNewSession(maxChangedGroups: Int, maxStateBytes: Int) throws(SessionStoreError) -> ExpansionState {
        guard changedGroupCount <= maxChangedGroups else { throw .tooManyChanges(limit: maxChangedGroups) }
        let state = compacted
        guard state.heapBytes <= maxStateBytes else { throw .sessionTooLarge(limit: maxStateBytes) }
        return state
    }
}

extension ExpansionCommand {
    /// Refuses, as running it would, a command that names no group of `menu` (or, for a reveal, no
    /// node): a conditional write checks this before its precondition, because a request that
    /// fails without its condition must fail that way, not with 412 (RFC 9110 §13.2.1). O(1).
    package func checkTarget(in menu: Menu) throws(SessionStoreError) {
        switch self {
        case .toggle(let id), .set(let id, _), .setSubtree(let id, _):
            do { _ = try menu.group(withID: id) } catch { throw .expansion(error) }
        case .reveal(let id):
            guard menu.node(withID: id) != nil else { throw .expansion(.unknownNode(id: id)) }
        case .setAll:
            break
        }
    }
}

/// A store whose writes wait on a remote backend and can go out without holding the calling
/// thread: the caller (an HTTP thread) starts the write, serves other requests meanwhile, and
/// finishes when the completion reports.
package protocol PipelinedSessionStore: SessionStore {
    /// Starts ``SessionStore/apply(_:to:in:if:)`` of `command` on the existing session `id`
    /// without waiting for the backend. Returns false, having changed nothing and never calling
    /// `completion`, when this write cannot start that way (no recent copy of the session here, a
    /// refusal or a no-op to decide on a fresh copy): the caller then calls `apply`. Otherwise
    /// `completion` is called exactly once, on another thread or this one (a write queued behind
    /// another write of the session that finds it cannot go out this way reports `.notWritten`).
    func startApply(_ command: ExpansionCommand, to id: SessionID, in menu: MenuGeneration, if condition: RevisionCondition?,
                    then completion: @escaping @Sendable (PipelinedWrite) -> Void) -> Bool
}

/// How a write started by ``PipelinedSessionStore/startApply(_:to:in:if:then:)`` ended.
package enum PipelinedWrite: Sendable {
    /// Written: the store holds the change, as `apply` would have answered it.
    case applied(AppliedChange)
    /// Nothing was written (another instance changed the session first, the backend lost its
    /// script): decide the write again with ``SessionStore/apply(_:to:in:if:)``.
    case notWritten
    /// Failed as `apply` would have failed (for a lost connection: the write may or may not have
    /// been made, so it must not simply be made again).
    case failed(SessionStoreError)
}
