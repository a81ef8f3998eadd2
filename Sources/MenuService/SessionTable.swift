import Synchronization

/// Sessions spread over ``shardCount`` shards by id, each shard a dictionary behind its own
/// `Mutex`, with a bound on how many sessions exist. The storage both session stores share.
///
/// Invariant: `count` equals the sessions held, counting a slot from ``reserveSlot(sweep:)`` until
/// it is filled or given back; it never exceeds `maxSessions` after a successful reservation.
/// Locks are held only for the caller's closure: a dictionary access and a state change.
final class SessionTable<Entry: Sendable>: Sendable {
    static var shardCount: Int { 64 }
    /// Shards sit this many mutex strides apart, so no two share a 128-byte span (two cache
    /// lines): threads locking different shards never contend for a line.
    private static var spacing: Int { max(1, 128 / MemoryLayout<Mutex<[SessionID: Entry]>>.stride) }

    let maxSessions: Int
    /// `shardCount * spacing` mutexes, shard `k` at `k * spacing`, the others padding. Raw memory
    /// rather than an array of objects, so locking a shard retains nothing shared.
    private nonisolated(unsafe) let slots: UnsafeMutablePointer<Mutex<[SessionID: Entry]>>
    private let liveCount: Atomic<Int>

    /// `contents`, when given, holds ``shardCount`` dictionaries already split by ``shardIndex(of:)``.
    init(maxSessions: Int, contents: [[SessionID: Entry]]? = nil) {
        self.maxSessions = maxSessions
        let initial = contents ?? Array(repeating: [:], count: Self.shardCount)
        precondition(initial.count == Self.shardCount)
        slots = .allocate(capacity: Self.shardCount * Self.spacing)
        for slot in 0 ..< Self.shardCount * Self.spacing {
            (slots + slot).initialize(to: Mutex(slot % Self.spacing == 0 ? initial[slot / Self.spacing] : [:]))
        }
        liveCount = Atomic(initial.reduce(0) { $0 + $1.count })
    }

    deinit {
        slots.deinitialize(count: Self.shardCount * Self.spacing)
        slots.deallocate()
    }

    static func shardIndex(of id: SessionID) -> Int { Int(id.low % UInt64(shardCount)) }

    /// Sessions held (expired ones count until they are swept).
    var count: Int { liveCount.load(ordering: .relaxed) }

    /// Runs `body` on the dictionary of `id`'s shard, under that shard's lock.
    func withShard<Result: Sendable, Failure: Error>(
        of id: SessionID, _ body: (inout [SessionID: Entry]) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withShard(at: Self.shardIndex(of: id), body)
    }

    /// Runs `body` on shard `index` (0 ..< ``shardCount``), under that shard's lock.
    func withShard<Result: Sendable, Failure: Error>(
        at index: Int, _ body: (inout [SessionID: Entry]) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        precondition(index >= 0 && index < Self.shardCount)
        return try slots[index * Self.spacing].withLock { (sessions: inout [SessionID: Entry]) throws(Failure) -> Result in
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
        for index in 0 ..< Self.shardCount {
            dropped += withShard(at: index) { sessions in
                let before = sessions.count
                sessions = sessions.filter { !isExpired($0.value) }
                return before - sessions.count
            }
        }
        releaseSlots(dropped)
        return dropped
    }
}
