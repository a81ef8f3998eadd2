import Synchronization

/// Sessions spread over ``shardCount`` shards by id, each shard a dictionary behind its own
/// `Mutex`, with a bound on how many sessions exist. The storage both session stores share.
///
/// Invariant: `count` equals the sessions held, counting a slot from ``reserveSlot(sweep:)`` until
/// it is filled or given back; it never exceeds `maxSessions` after a successful reservation.
/// Locks are held only for the caller's closure: a dictionary access and a state change.
final class SessionTable<Entry: Sendable>: Sendable {
    static var shardCount: Int { 64 }

    final class Shard: Sendable {
        let sessions: Mutex<[SessionID: Entry]>
        init(_ sessions: [SessionID: Entry]) { self.sessions = Mutex(sessions) }
    }

    let maxSessions: Int
    let shards: [Shard]
    private let liveCount: Atomic<Int>

    /// `contents`, when given, holds ``shardCount`` dictionaries already split by ``shardIndex(of:)``.
    init(maxSessions: Int, contents: [[SessionID: Entry]]? = nil) {
        self.maxSessions = maxSessions
        let initial = contents ?? Array(repeating: [:], count: Self.shardCount)
        precondition(initial.count == Self.shardCount)
        shards = initial.map(Shard.init)
        liveCount = Atomic(initial.reduce(0) { $0 + $1.count })
    }

    static func shardIndex(of id: SessionID) -> Int { Int(id.low % UInt64(shardCount)) }

    /// Sessions held (expired ones count until they are swept).
    var count: Int { liveCount.load(ordering: .relaxed) }

    /// Runs `body` on the dictionary of `id`'s shard, under that shard's lock.
    func withShard<Result: Sendable, Failure: Error>(
        of id: SessionID, _ body: (inout [SessionID: Entry]) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try shards[Self.shardIndex(of: id)].sessions.withLock { (sessions: inout [SessionID: Entry]) throws(Failure) -> Result in
            try body(&sessions)
        }
    }

    /// Takes a slot for a new session, sweeping with `sweep` once when the table is full.
    func reserveSlot(sweep: () -> Void) throws(SessionStoreError) {
        if liveCount.add(1, ordering: .relaxed).newValue <= maxSessions { return }
        liveCount.subtract(1, ordering: .relaxed)
        sweep()
        if liveCount.add(1, ordering: .relaxed).newValue <= maxSessions { return }
        liveCount.subtract(1, ordering: .relaxed)
        throw .tooManySessions(limit: maxSessions, retryAfterSeconds: 60)
    }

    /// Gives back `slots` (a removed session, or a reservation that was not used).
    func releaseSlots(_ slots: Int = 1) {
        if slots > 0 { liveCount.subtract(slots, ordering: .relaxed) }
    }

    /// Removes every entry `isLive` rejects, shard by shard; returns how many went. O(sessions).
    @discardableResult
    func removeAll(where isExpired: (Entry) -> Bool) -> Int {
        var dropped = 0
        for shard in shards {
            dropped += shard.sessions.withLock { sessions in
                let before = sessions.count
                sessions = sessions.filter { !isExpired($0.value) }
                return before - sessions.count
            }
        }
        releaseSlots(dropped)
        return dropped
    }
}
