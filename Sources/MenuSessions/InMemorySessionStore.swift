import MenuModel

/// The default ``SessionStore``: sessions in memory only, lost on restart.
///
/// Sessions live in a ``SessionTable`` (64 shards, each behind its own `Mutex`), so requests for
/// different sessions rarely contend; a lock is held only for a lookup, the O(1) least-recently-used
/// bookkeeping and the O(depth · log m) state change, never during JSON encoding or I/O. At a full
/// table a new session evicts the least recently used one idle for ``evictionIdle`` or longer.
/// After a reload, a session is carried over to the new menu on its next use or by ``adopt(_:)``,
/// whichever comes first (``SessionTable/withEntry(of:in:now:forWrite:_:)``).
package final class InMemorySessionStore: SessionStore {
    /// Idle time after which a session expires.
    package let timeToLive: Duration
    /// Idle time after which a session may be evicted for a new one when the table is full.
    package let evictionIdle: Duration
    /// Groups one session may hold changed from the menu's default at most.
    package let maxChangedGroups: Int
    /// Splices each session keeps for ``changes(of:since:in:)``.
    package let changeHistory: Int
    /// Bytes one session's state may hold (``SessionLimits/maxStateBytes``).
    package let maxStateBytes: Int
    let table: SessionTable<Entry>
    private let latest: LatestMenu
    private let clock: @Sendable () -> SessionTime

    struct Entry: SessionStateEntry {
        var state: SessionState
        var epoch: MenuEpoch
        var history: ChangeHistory
        var lastUsed: SessionTime
        static var carryRecordsReload: Bool { true }
    }

    package init(
        menu: MenuGeneration, limits: SessionLimits = .defaults,
        clock: @escaping @Sendable () -> SessionTime = SessionClock.now
    ) {
        timeToLive = limits.timeToLive
        evictionIdle = limits.evictionIdle
        maxChangedGroups = limits.maxChangedGroups
        changeHistory = limits.changeHistory
        maxStateBytes = limits.maxStateBytes
        self.clock = clock
        latest = LatestMenu(menu)
        table = SessionTable(
            maxSessions: limits.maxSessions, timeToLive: SessionClock.milliseconds(of: limits.timeToLive),
            evictionIdle: SessionClock.milliseconds(of: limits.evictionIdle), memoryBudget: limits.sessionMemory,
            historyCapacity: limits.changeHistory)
    }

    package convenience init(
        menu: Menu, maxSessions: Int = SessionLimits.defaults.maxSessions,
        timeToLive: Duration = SessionLimits.defaults.timeToLive,
        evictionIdle: Duration = SessionLimits.defaults.evictionIdle,
        maxChangedGroups: Int = SessionLimits.defaults.maxChangedGroups,
        sessionMemory: Int = SessionLimits.defaults.sessionMemory,
        clock: @escaping @Sendable () -> SessionTime = SessionClock.now
    ) {
        self.init(
            menu: MenuGeneration(menu),
            limits: SessionLimits(
                maxSessions: maxSessions, timeToLive: timeToLive, evictionIdle: evictionIdle,
                maxChangedGroups: maxChangedGroups, sessionMemory: sessionMemory),
            clock: clock)
    }

    package var maxSessions: Int { table.maxSessions }
    /// Sessions currently held (expired ones count until they are removed).
    package var count: Int { table.count }
    /// Sessions held, created, expired and evicted (``SessionCounts``).
    package var sessionCounts: SessionCounts { table.counts }
    package var currentMenu: MenuGeneration { latest.current }
    /// A session carried over to a new menu gets a reload entry (``SessionStateEntry/carryRecordsReload``).
    package var recordsReloads: Bool { true }

    package func create(in menu: MenuGeneration, state: SessionState) throws(SessionStoreError) -> SessionID {
        let state = try state.checkedForNewSession(maxChangedGroups: maxChangedGroups, maxStateBytes: maxStateBytes)
        return try insert(state, history: ChangeHistory(revision: 0), in: menu)
    }

    /// Inserts a new session holding `state` and `history`, which belong to `menu`, making room
    /// for its bytes first.
    private func insert(_ state: SessionState, history: ChangeHistory, in menu: MenuGeneration)
        throws(SessionStoreError) -> SessionID
    {
        latest.note(menu)
        let now = clock()
        let entry = Entry(state: state, epoch: menu.epoch, history: history, lastUsed: now)
        try table.reserveSlot(now: now, bytes: SessionShard<Entry>.footprint(of: entry))
        let id = SessionID.random()
        table.insertNew(id, entry, now: now)
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
        guard wasLive else {
            table.countExpiredOnUse()
            throw .unknownSession
        }
    }

    package func snapshot(of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> SessionSnapshot {
        latest.note(menu)
        return try table.withEntry(of: id, in: menu, now: clock(), forWrite: false) { shard, position in
            shard.reading(at: position) { $0.snapshot }
        }
    }

    package func apply(
        _ command: SessionCommand, to id: SessionID?, in menu: MenuGeneration,
        if condition: RevisionCondition?
    ) throws(SessionStoreError) -> AppliedChange {
        let limit = maxChangedGroups
        let changeHistory = changeHistory
        guard let id else {
            // A write without a session: the default view, revision 0, then a new session holding the result.
            if let condition, !condition.admits(0) { throw .revisionMismatch(current: 0) }
            var view = FlattenedView(menu: menu.menu)
            let outcome = try command.run(on: &view, maxChangedGroups: limit, maxStateBytes: maxStateBytes)
            var history = ChangeHistory(revision: 0)
            if outcome.changedState { history.record(outcome.change.historyEntry, capacity: changeHistory) }
            let newID = try insert(view.state, history: history, in: menu)
            return AppliedChange(
                sessionID: newID, created: true, change: outcome.change, state: view.state,
                revision: history.endRevision)
        }
        latest.note(menu)
        let now = clock()
        let maxStateBytes = maxStateBytes
        if command.mayGrowState { try table.makeRoom(forBytes: 0, now: now, excluding: id) }
        defer { table.settleBudget(now: now, excluding: id) }
        // An expired entry is refused; the write's sweep of the shard's oldest end removes it.
        return try table.withEntry(of: id, in: menu, now: now, forWrite: true) {
            shard, position throws(SessionStoreError) in
            // Out of its slot, the state is uniquely referenced while it changes.
            try shard[position].check(condition)
            var entry = shard.take(at: position)
            defer { shard.restore(entry, at: position) }
            var view = FlattenedView(menu: menu.menu, state: entry.state)
            entry.state = SessionState()
            defer { entry.state = view.state }
            let outcome = try command.run(on: &view, maxChangedGroups: limit, maxStateBytes: maxStateBytes)
            if outcome.changedState { entry.history.record(outcome.change.historyEntry, capacity: changeHistory) }
            return AppliedChange(
                sessionID: id, created: false, change: outcome.change, state: view.state, revision: entry.revision)
        }
    }

    package func changes(of id: SessionID, since: Int, in menu: MenuGeneration) throws(SessionStoreError)
        -> SessionChanges
    {
        latest.note(menu)
        return try table.changes(of: id, since: since, in: menu, now: clock())
    }

    @discardableResult
    package func adopt(_ menu: MenuGeneration) -> SessionRebaseReport {
        latest.note(menu)
        return table.rebaseAll(to: menu)
    }

    /// Removes every session idle longer than the time to live. O(expired + shards); writes
    /// already remove a few from their shard's least recently used end each.
    @discardableResult
    package func sweepExpired() -> Int {
        table.removeExpired(now: clock())
    }
}
