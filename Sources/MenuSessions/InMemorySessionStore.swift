import MenuModel

/// The default ``SessionStore``: sessions in memory only, lost on restart.
///
/// Sessions live in a ``SessionTable`` (64 shards, each behind its own `Mutex`), so requests for
/// different sessions rarely contend; a lock is held only for a lookup, the O(1) least-recently-used
/// bookkeeping and the O(depth · log m) state change, never during JSON encoding or I/O. At a full
/// table a new session evicts the least recently used one idle for ``evictionIdle`` or longer.
package final class InMemorySessionStore: SessionStore {
    package let menu: Menu
    /// Idle time after which a session expires.
    package let timeToLive: Duration
    /// Idle time after which a session may be evicted for a new one when the table is full.
    package let evictionIdle: Duration
    /// Groups one session may hold changed from the menu's default at most.
    package let maxChangedGroups: Int
    let table: SessionTable<Entry>
    private let clock: @Sendable () -> SessionTime

    struct Entry: SessionTableEntry {
        var state: ExpansionState
        var lastUsed: SessionTime
    }

    package init(menu: Menu, maxSessions: Int = 1_000_000, timeToLive: Duration = .seconds(30 * 24 * 3600),
                evictionIdle: Duration = .seconds(3600), maxChangedGroups: Int = 10_000,
                clock: @escaping @Sendable () -> SessionTime = SessionClock.now) {
        self.menu = menu
        self.timeToLive = timeToLive
        self.evictionIdle = evictionIdle
        self.maxChangedGroups = maxChangedGroups
        self.clock = clock
        table = SessionTable(maxSessions: maxSessions, timeToLive: SessionClock.milliseconds(of: timeToLive),
                             evictionIdle: SessionClock.milliseconds(of: evictionIdle))
    }

    package var maxSessions: Int { table.maxSessions }
    /// Sessions currently held (expired ones count until they are removed).
    package var count: Int { table.count }

    package func create() throws(SessionStoreError) -> SessionID {
        try insert(ExpansionState())
    }

    /// Inserts a new session holding `state`.
    private func insert(_ state: ExpansionState) throws(SessionStoreError) -> SessionID {
        let now = clock()
        try table.reserveSlot(now: now)
        let id = SessionID.random()
        table.withShardForWrite(of: id, now: now) { $0.insert(id, Entry(state: state, lastUsed: now)) }
        return id
    }

    package func delete(_ id: SessionID) throws(SessionStoreError) {
        let now = clock()
        let ttl = table.timeToLive
        // An expired session is removed as well, but answered as the reads answer it: unknown.
        let wasLive: Bool = try table.withShardForWrite(of: id, now: now) { shard throws(SessionStoreError) in
            guard let position = shard.position(of: id) else { throw .unknownSession }
            return now.milliseconds(since: shard.remove(at: position).lastUsed) < ttl
        }
        table.releaseSlots()
        guard wasLive else { throw .unknownSession }
    }

    package func state(of id: SessionID) throws(SessionStoreError) -> ExpansionState {
        let now = clock()
        let ttl = table.timeToLive
        return try table.withShard(of: id) { shard throws(SessionStoreError) in
            guard let position = shard.use(id, now: now, timeToLive: ttl) else { throw .unknownSession }
            return shard[position].state
        }
    }

    package func apply(_ command: ExpansionCommand, to id: SessionID?) throws(SessionStoreError) -> AppliedChange {
        let limit = maxChangedGroups
        guard let id else {
            // A write without a session: compute on a fresh state, then store it as a new session.
            var view = FlattenedView(menu: menu)
            let change = try Self.run(command, on: &view, maxChangedGroups: limit)
            let newID = try insert(view.state)
            return AppliedChange(sessionID: newID, created: true, change: change, state: view.state)
        }
        let now = clock()
        let ttl = table.timeToLive
        let menu = self.menu
        return try table.withShardForWrite(of: id, now: now) { shard throws(SessionStoreError) in
            // An expired entry is refused; the write's sweep of the shard's oldest end removes it.
            guard let position = shard.use(id, now: now, timeToLive: ttl) else { throw .unknownSession }
            // Out of its slot, the state is uniquely referenced while it changes.
            var entry = shard.take(at: position)
            defer { shard.restore(entry, at: position) }
            var view = FlattenedView(menu: menu, state: entry.state)
            entry.state = ExpansionState()
            defer { entry.state = view.state }
            let change = try Self.run(command, on: &view, maxChangedGroups: limit)
            return AppliedChange(sessionID: id, created: false, change: change, state: view.state)
        }
    }

    /// Applies `command` to `view`, turning the model's error into the store's. A change that
    /// would take the groups changed past `maxChangedGroups` is undone and refused
    /// (`.tooManyChanges`); changes that do not add a changed group are always allowed.
    package static func run(_ command: ExpansionCommand, on view: inout FlattenedView, maxChangedGroups: Int)
        throws(SessionStoreError) -> ExpansionChange
    {
        let before = view.state.changedGroupCount
        let change: ExpansionChange
        do {
            switch command {
            case .toggle(let groupID): change = try view.toggle(groupID)
            case .set(let groupID, let isExpanded): change = try view.setExpanded(groupID, isExpanded)
            }
        } catch {
            throw .expansion(error)
        }
        if view.state.changedGroupCount > max(before, maxChangedGroups) {
            _ = try? view.setExpanded(change.id, !change.isExpanded)  // back to the group's default
            throw .tooManyChanges(limit: maxChangedGroups)
        }
        return change
    }

    /// Removes every session idle longer than the time to live. O(expired + shards); writes
    /// already remove a few from their shard's least recently used end each.
    @discardableResult
    package func sweepExpired() -> Int {
        table.removeExpired(now: clock())
    }
}
