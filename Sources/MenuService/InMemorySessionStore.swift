import MenuModel
import Synchronization

/// The default ``SessionStore``: sessions in memory only, lost on restart.
///
/// Sessions are spread over `shardCount` shards by id, each behind its own `Mutex`, so requests
/// for different sessions rarely contend; a lock is held only for a dictionary access and the
/// O(depth · log m) state change, never during JSON encoding or I/O.
public final class InMemorySessionStore: SessionStore {
    static let shardCount = 64

    public let menu: Menu
    public let maxSessions: Int
    /// Idle time after which a session expires.
    public let timeToLive: Duration
    private let shards: [Shard]
    private let liveCount = Atomic<Int>(0)
    private let clock: @Sendable () -> ContinuousClock.Instant

    final class Shard: Sendable {
        let sessions = Mutex<[SessionID: Entry]>([:])
    }

    struct Entry {
        var state: ExpansionState
        var lastUsed: ContinuousClock.Instant
    }

    public init(menu: Menu, maxSessions: Int = 1_000_000, timeToLive: Duration = .seconds(30 * 24 * 3600),
                clock: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.menu = menu
        self.maxSessions = maxSessions
        self.timeToLive = timeToLive
        self.clock = clock
        shards = (0 ..< Self.shardCount).map { _ in Shard() }
    }

    /// Sessions currently held (expired ones count until they are swept).
    public var count: Int { liveCount.load(ordering: .relaxed) }

    private func shard(for id: SessionID) -> Shard { shards[Int(id.low % UInt64(Self.shardCount))] }

    public func create() throws(SessionStoreError) -> SessionID {
        try insert(ExpansionState())
    }

    /// Inserts a new session holding `state`.
    func insert(_ state: ExpansionState) throws(SessionStoreError) -> SessionID {
        try reserveSlot()
        let id = SessionID.random()
        let now = clock()
        shard(for: id).sessions.withLock { $0[id] = Entry(state: state, lastUsed: now) }
        return id
    }

    private func reserveSlot() throws(SessionStoreError) {
        if liveCount.add(1, ordering: .relaxed).newValue <= maxSessions { return }
        liveCount.subtract(1, ordering: .relaxed)
        sweepExpired()
        if liveCount.add(1, ordering: .relaxed).newValue <= maxSessions { return }
        liveCount.subtract(1, ordering: .relaxed)
        throw .tooManySessions(limit: maxSessions, retryAfterSeconds: 60)
    }

    public func delete(_ id: SessionID) throws(SessionStoreError) {
        let removed = shard(for: id).sessions.withLock { $0.removeValue(forKey: id) != nil }
        guard removed else { throw .unknownSession }
        liveCount.subtract(1, ordering: .relaxed)
    }

    public func state(of id: SessionID) throws(SessionStoreError) -> ExpansionState {
        let now = clock()
        let ttl = timeToLive
        let found: ExpansionState? = shard(for: id).sessions.withLock { sessions in
            guard let entry = sessions[id], now - entry.lastUsed < ttl else { return nil }
            sessions[id]!.lastUsed = now
            return entry.state
        }
        guard let found else { throw .unknownSession }
        return found
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
        let ttl = timeToLive
        let menu = self.menu
        let outcome: Result<AppliedChange, SessionStoreError> = shard(for: id).sessions.withLock { sessions in
            guard var entry = sessions[id], now - entry.lastUsed < ttl else { return .failure(.unknownSession) }
            sessions[id] = nil  // keep the state uniquely referenced while it changes
            defer { sessions[id] = entry }
            entry.lastUsed = now
            var view = FlattenedView(menu: menu, state: entry.state)
            entry.state = ExpansionState()
            do throws(SessionStoreError) {
                let change = try Self.run(command, on: &view)
                entry.state = view.state
                return .success(AppliedChange(sessionID: id, created: false, change: change, state: view.state))
            } catch {
                entry.state = view.state
                return .failure(error)
            }
        }
        return try outcome.get()
    }

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

    /// Drops sessions idle longer than the time to live. O(sessions); runs when the store is full
    /// (and periodically from the server).
    @discardableResult
    public func sweepExpired() -> Int {
        let now = clock()
        let ttl = timeToLive
        var dropped = 0
        for shard in shards {
            let removed = shard.sessions.withLock { sessions in
                let before = sessions.count
                sessions = sessions.filter { now - $0.value.lastUsed < ttl }
                return before - sessions.count
            }
            dropped += removed
        }
        if dropped > 0 { liveCount.subtract(dropped, ordering: .relaxed) }
        return dropped
    }
}
