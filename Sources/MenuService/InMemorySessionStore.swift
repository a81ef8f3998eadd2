import MenuModel

/// The default ``SessionStore``: sessions in memory only, lost on restart.
///
/// Sessions live in a ``SessionTable`` (64 shards, each behind its own `Mutex`), so requests for
/// different sessions rarely contend; a lock is held only for a dictionary access and the
/// O(depth · log m) state change, never during JSON encoding or I/O.
public final class InMemorySessionStore: SessionStore {
    public let menu: Menu
    /// Idle time after which a session expires.
    public let timeToLive: Duration
    /// ``timeToLive`` in whole milliseconds, what the checks compare with.
    private let timeToLiveMilliseconds: Int64
    private let table: SessionTable<Entry>
    private let clock: @Sendable () -> SessionTime

    struct Entry: Sendable {
        var state: ExpansionState
        var lastUsed: SessionTime
    }

    public init(menu: Menu, maxSessions: Int = 1_000_000, timeToLive: Duration = .seconds(30 * 24 * 3600),
                clock: @escaping @Sendable () -> SessionTime = SessionClock.now) {
        self.menu = menu
        self.timeToLive = timeToLive
        timeToLiveMilliseconds = SessionClock.milliseconds(of: timeToLive)
        self.clock = clock
        table = SessionTable(maxSessions: maxSessions)
    }

    public var maxSessions: Int { table.maxSessions }
    /// Sessions currently held (expired ones count until they are swept).
    public var count: Int { table.count }

    public func create() throws(SessionStoreError) -> SessionID {
        try insert(ExpansionState())
    }

    /// Inserts a new session holding `state`.
    private func insert(_ state: ExpansionState) throws(SessionStoreError) -> SessionID {
        try table.reserveSlot { sweepExpired() }
        let id = SessionID.random()
        let entry = Entry(state: state, lastUsed: clock())
        table.withShard(of: id) { $0[id] = entry }
        return id
    }

    public func delete(_ id: SessionID) throws(SessionStoreError) {
        try table.withShard(of: id) { sessions throws(SessionStoreError) in
            guard sessions.removeValue(forKey: id) != nil else { throw .unknownSession }
        }
        table.releaseSlots()
    }

    public func state(of id: SessionID) throws(SessionStoreError) -> ExpansionState {
        let now = clock()
        let ttl = timeToLiveMilliseconds
        return try table.withShard(of: id) { sessions throws(SessionStoreError) in
            // One hash lookup, and one in-place access to the entry for the check, the lastUsed
            // update and the read.
            guard let index = sessions.index(forKey: id) else { throw .unknownSession }
            return try Self.touch(&sessions.values[index], at: now, timeToLive: ttl)
        }
    }

    /// The state of a live `entry`, marked used at `now`; `.unknownSession` when it has expired.
    private static func touch(_ entry: inout Entry, at now: SessionTime, timeToLive: Int64)
        throws(SessionStoreError) -> ExpansionState
    {
        guard now.milliseconds(since: entry.lastUsed) < timeToLive else { throw .unknownSession }
        entry.lastUsed = now
        return entry.state
    }

    public func apply(_ command: ExpansionCommand, to id: SessionID?) throws(SessionStoreError) -> AppliedChange {
        guard let id else {
            // A write without a session: compute on a fresh state, then store it as a new session.
            var view = FlattenedView(menu: menu)
            let change = try Self.run(command, on: &view)
            let newID = try insert(view.state)
            return AppliedChange(sessionID: newID, created: true, change: change, state: view.state)
        }
        let now = clock()
        let ttl = timeToLiveMilliseconds
        let menu = self.menu
        return try table.withShard(of: id) { sessions throws(SessionStoreError) in
            // An expired entry stays where it is, counted until a sweep drops it and frees its slot.
            guard let index = sessions.index(forKey: id), now.milliseconds(since: sessions.values[index].lastUsed) < ttl else {
                throw .unknownSession
            }
            var entry = sessions.remove(at: index).value
            // The entry is out of the dictionary, so the state is uniquely referenced while it changes.
            defer { sessions[id] = entry }
            entry.lastUsed = now
            var view = FlattenedView(menu: menu, state: entry.state)
            entry.state = ExpansionState()
            defer { entry.state = view.state }
            let change = try Self.run(command, on: &view)
            return AppliedChange(sessionID: id, created: false, change: change, state: view.state)
        }
    }

    /// Applies `command` to `view`, turning the model's error into the store's.
    static func run(_ command: ExpansionCommand, on view: inout FlattenedView) throws(SessionStoreError) -> ExpansionChange {
        do {
            switch command {
            case .toggle(let groupID): return try view.toggle(groupID)
            case .set(let groupID, let isExpanded): return try view.setExpanded(groupID, isExpanded)
            }
        } catch {
            throw .expansion(error)
        }
    }

    /// Drops sessions idle longer than the time to live. O(sessions); runs when the store is full.
    @discardableResult
    public func sweepExpired() -> Int {
        let now = clock()
        let ttl = timeToLiveMilliseconds
        return table.removeAll { now.milliseconds(since: $0.lastUsed) >= ttl }
    }
}
