import Synchronization

/// Sessions spread over ``shardCount`` shards by id, each a ``SessionShard`` (slots on a
/// least-recently-used list, in use order to within a 64th of the shorter of the time to live and
/// the eviction idle time) behind its own `Mutex`, with a bound on how many sessions exist.
/// The storage both session stores share.
///
/// Invariant: `count` equals the sessions held, counting a slot from ``reserveSlot(now:beforeEvicting:)``
/// until it is filled or given back; it never exceeds `maxSessions` after a successful reservation.
/// Locks are held only for the caller's closure: a lookup and a state change, plus on writes at
/// most ``expiredPerWrite`` expired sessions removed from the shard's least recently used end.
/// Cost: a read or write O(1) beyond its state change; a reservation at a full table visits each
/// shard's least recently used end once (at most ``shardCount`` × ``examinedPerShardWhenFull`` + 1
/// sessions, whatever their number), evicting or refusing in O(1).
package final class SessionTable<Entry: SessionTableEntry>: Sendable {
    package static var shardCount: Int { 64 }
    /// Expired sessions a write removes at most from its shard's least recently used end.
    package static var expiredPerWrite: Int { 2 }
    /// Sessions a reservation at a full table looks at per shard (from the least recently used end).
    package static var examinedPerShardWhenFull: Int { 4 }
    /// Shards sit this many mutex strides apart, so no two share a 128-byte span (two cache
    /// lines): threads locking different shards never contend for a line.
    private static var spacing: Int { max(1, 128 / MemoryLayout<Mutex<SessionShard<Entry>>>.stride) }

    package let maxSessions: Int
    /// The entries each session's ``ChangeHistory`` keeps (a carry-over's reload entry included).
    package let historyCapacity: Int
    /// The resident memory the sessions may cause together (``SessionLimits/sessionMemory``): what
    /// metrics report and refusals name.
    package let memoryBudget: Int
    /// The bytes the sessions may hold together (``SessionShard/footprint(of:)`` each): the budget
    /// less a 16th (``SessionLimits/heldBytes(ofBudget:)``), see ``makeRoom(forBytes:now:excluding:beforeEvicting:)``.
    package let heldBytesLimit: Int
    /// The bytes the sessions hold now, kept by the shards as entries change.
    private let meter = SessionBytes()
    /// Milliseconds of idle time after which a session has expired.
    package let timeToLive: Int64
    /// Milliseconds of idle time after which a session may be evicted to make room for a new one.
    package let evictionIdle: Int64
    /// `shardCount * spacing` mutexes, shard `k` at `k * spacing`, the others padding. Raw memory
    /// rather than an array of objects, so locking a shard retains nothing shared.
    private nonisolated(unsafe) let slots: UnsafeMutablePointer<Mutex<SessionShard<Entry>>>
    /// Sessions held, expired ones included until they are removed, plus slots reserved and not
    /// yet filled: ``count``. Not the live sessions alone, whatever the name says.
    private let liveCount: Atomic<Int>
    /// Sessions looked at by reservations at a full table, since start: what tests bound the work
    /// of a refusal by.
    package let sessionsExaminedWhenFull = Atomic<Int>(0)
    /// Sessions inserted by ``insertNew(_:_:now:)``, removed on expiry by a sweep (any of the
    /// three), and evicted for a new one at a full table, since start: what metrics report. A
    /// relaxed add each, on paths that take a shard lock anyway (never on a read).
    package let createdCount = Atomic<Int>(0)
    package let expiredCount = Atomic<Int>(0)
    package let evictedCount = Atomic<Int>(0)

    /// Counts a session that had expired and was removed when it was next used (not by a sweep).
    package func countExpiredOnUse() { expiredCount.add(1, ordering: .relaxed) }

    /// `contents`, when given, holds ``shardCount`` dictionaries already split by ``shardIndex(of:)``.
    package init(
        maxSessions: Int, timeToLive: Int64, evictionIdle: Int64, memoryBudget: Int = .max,
        historyCapacity: Int = SessionLimits.defaults.changeHistory, contents: [[SessionID: Entry]]? = nil
    ) {
        self.maxSessions = maxSessions
        self.historyCapacity = historyCapacity
        self.memoryBudget = memoryBudget
        self.heldBytesLimit = SessionLimits.heldBytes(ofBudget: memoryBudget)
        self.timeToLive = timeToLive
        self.evictionIdle = evictionIdle
        let initial = contents ?? Array(repeating: [:], count: Self.shardCount)
        precondition(initial.count == Self.shardCount)
        // The use order need not be finer than a 64th of the shortest idle time that acts on it.
        let promotion = min(timeToLive, evictionIdle) / 64
        slots = .allocate(capacity: Self.shardCount * Self.spacing)
        for slot in 0 ..< Self.shardCount * Self.spacing {
            let shard =
                slot % Self.spacing == 0
                ? SessionShard(initial[slot / Self.spacing], promotionInterval: promotion, meter: meter)
                : SessionShard(promotionInterval: promotion, meter: meter)
            (slots + slot).initialize(to: Mutex(shard))
        }
        liveCount = Atomic(initial.reduce(0) { $0 + $1.count })
    }

    deinit {
        slots.deinitialize(count: Self.shardCount * Self.spacing)
        slots.deallocate()
    }

    package static func shardIndex(of id: SessionID) -> Int { Int(id.low % UInt64(shardCount)) }

    /// Sessions held (expired ones count until they are removed).
    package var count: Int { liveCount.load(ordering: .relaxed) }

    /// The bytes the sessions held count for now (``SessionShard/footprint(of:)`` each). One relaxed load.
    package var bytes: Int { meter.value }

    /// Runs `body` on `id`'s shard, under that shard's lock (for reads).
    package func withShard<Result: Sendable, Failure: Error>(
        of id: SessionID, _ body: (inout SessionShard<Entry>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withShard(at: Self.shardIndex(of: id), body)
    }

    /// Runs `body` on shard `index` (0 ..< ``shardCount``), under that shard's lock.
    package func withShard<Result: Sendable, Failure: Error>(
        at index: Int, _ body: (inout SessionShard<Entry>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        precondition(index >= 0 && index < Self.shardCount)
        return try slots[index * Self.spacing].withLock {
            (shard: inout SessionShard<Entry>) throws(Failure) -> Result in
            try body(&shard)
        }
    }

    /// Runs `body` on `id`'s shard for a write, then removes up to ``expiredPerWrite`` sessions
    /// expired at `now` from the shard's least recently used end (under the same lock): the
    /// incremental expiry sweep. Those removals are counted here; any `body` makes (a delete) are
    /// the caller's to give back with ``releaseSlots(_:)``.
    package func withShardForWrite<Result: Sendable, Failure: Error>(
        of id: SessionID, now: SessionTime, _ body: (inout SessionShard<Entry>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var removed = 0
        defer {
            releaseSlots(removed)
            if removed > 0 { expiredCount.add(removed, ordering: .relaxed) }
        }
        let timeToLive = timeToLive
        return try withShard(of: id) { shard throws(Failure) -> Result in
            defer {
                removed = shard.removeExpired(now: now, timeToLive: timeToLive, limit: Self.expiredPerWrite).removed
            }
            return try body(&shard)
        }
    }

    /// Takes a slot for a new session. At a full table it makes room in bounded work: it removes
    /// expired sessions from each shard's least recently used end (looking at up to
    /// ``examinedPerShardWhenFull`` per shard); when none had expired, it evicts the least recently
    /// used session of the whole table if that one has been idle for ``evictionIdle``, after
    /// `beforeEvicting` accepted it (the durable store journals the eviction; a throw keeps the
    /// session and is rethrown). Otherwise `.tooManySessions`, with the seconds until the oldest
    /// session becomes evictable. Then it makes room for `bytes` more in the byte budget the same
    /// way (``makeRoom(forBytes:now:excluding:beforeEvicting:)``), giving the slot back if it cannot.
    package func reserveSlot(
        now: SessionTime, bytes: Int = 0, beforeEvicting: (SessionID) throws(SessionStoreError) -> Void = { _ in }
    ) throws(SessionStoreError) {
        try reserveCount(now: now, beforeEvicting: beforeEvicting)
        do {
            try makeRoom(forBytes: bytes, now: now, excluding: nil, beforeEvicting: beforeEvicting)
        } catch {
            releaseSlots()
            throw error
        }
    }

    private func reserveCount(now: SessionTime, beforeEvicting: (SessionID) throws(SessionStoreError) -> Void)
        throws(SessionStoreError)
    {
        if liveCount.add(1, ordering: .relaxed).newValue <= maxSessions { return }
        liveCount.subtract(1, ordering: .relaxed)
        let (freed, oldest) = removeExpiredAtOldestEnds(now: now, excluding: nil)
        if freed > 0 {
            releaseSlots(freed - 1)  // one of them is this reservation's
            return
        }
        if let oldest, try evict(oldest, now: now, sparing: nil, beforeEvicting: beforeEvicting) { return }  // its slot is this reservation's
        if liveCount.add(1, ordering: .relaxed).newValue <= maxSessions { return }  // one was deleted meanwhile
        liveCount.subtract(1, ordering: .relaxed)
        throw .tooManySessions(
            limit: maxSessions, retryAfterSeconds: retryAfterSeconds(oldest: oldest?.lastUsed, now: now))
    }

    /// Evictions one ``makeRoom(forBytes:now:excluding:beforeEvicting:)`` makes at most, so one
    /// request's work stays bounded (each costs a look at every shard's oldest end).
    package static var evictionsPerRequest: Int { 256 }

    /// Makes the sessions' bytes plus `extra` fit ``heldBytesLimit``: removes expired sessions from
    /// each shard's least recently used end, then evicts the least recently used sessions of the
    /// whole table idle for ``evictionIdle`` (never `excluding`, the session being written), one at
    /// a time, after `beforeEvicting` accepted each, up to ``evictionsPerRequest``. When that is not
    /// enough, `.sessionMemoryFull` with the seconds until the oldest session becomes evictable.
    /// Nothing when they fit already: one relaxed load. Concurrent callers may each fit their own
    /// `extra` before either inserts, so the budget can be passed by the bytes of the writes in
    /// flight (at most one session's cap per HTTP thread).
    package func makeRoom(
        forBytes extra: Int, now: SessionTime, excluding: SessionID?,
        beforeEvicting: (SessionID) throws(SessionStoreError) -> Void = { _ in }
    ) throws(SessionStoreError) {
        guard meter.value + extra > heldBytesLimit else { return }
        var evictions = 0
        var (freed, oldest) = removeExpiredAtOldestEnds(now: now, excluding: excluding)
        releaseSlots(freed)
        while meter.value + extra > heldBytesLimit {
            guard let candidate = oldest, evictions < Self.evictionsPerRequest,
                try evict(candidate, now: now, sparing: excluding, beforeEvicting: beforeEvicting)
            else {
                throw .sessionMemoryFull(
                    budget: memoryBudget, retryAfterSeconds: retryAfterSeconds(oldest: oldest?.lastUsed, now: now))
            }
            releaseSlots()
            evictions += 1
            (freed, oldest) = removeExpiredAtOldestEnds(now: now, excluding: excluding)
            releaseSlots(freed)
        }
    }

    /// After a write that may have taken the sessions past ``heldBytesLimit`` (writes are admitted
    /// while the bytes fit, and one write grows its session by little): evicts idle sessions until
    /// they fit again, if it can; what it cannot, the next write's ``makeRoom(forBytes:now:excluding:beforeEvicting:)`` refuses.
    package func settleBudget(
        now: SessionTime, excluding: SessionID?,
        beforeEvicting: (SessionID) throws(SessionStoreError) -> Void = { _ in }
    ) {
        guard meter.value > heldBytesLimit else { return }
        try? makeRoom(forBytes: 0, now: now, excluding: excluding, beforeEvicting: beforeEvicting)
    }

    /// Removes expired sessions from each shard's least recently used end (up to
    /// ``examinedPerShardWhenFull`` looked at per shard) and finds the oldest survivor of the whole
    /// table, `excluding` aside: the eviction candidate. The caller gives back the `freed` slots.
    private func removeExpiredAtOldestEnds(now: SessionTime, excluding: SessionID?) -> (
        freed: Int, oldest: (shard: Int, lastUsed: SessionTime)?
    ) {
        var examined = 0
        var freed = 0
        var oldest: (shard: Int, lastUsed: SessionTime)?
        let timeToLive = timeToLive
        for index in 0 ..< Self.shardCount {
            let (removed, looked, survivor) = withShard(at: index) { shard in
                let (removed, looked) = shard.removeExpired(
                    now: now, timeToLive: timeToLive, limit: Self.examinedPerShardWhenFull)
                let survivor = shard.leastRecentlyUsed.flatMap { $0.id == excluding ? nil : $0.lastUsed }
                return (removed, looked, survivor)
            }
            freed += removed
            examined += looked
            if let survivor, oldest.map({ survivor < $0.lastUsed }) ?? true { oldest = (index, survivor) }
        }
        sessionsExaminedWhenFull.add(examined, ordering: .relaxed)
        if freed > 0 { expiredCount.add(freed, ordering: .relaxed) }
        return (freed, oldest)
    }

    /// Evicts the least recently used session of shard `oldest.shard` if it is still idle for
    /// ``evictionIdle`` and not pinned (re-checked under the lock: it may have been used or deleted
    /// since; never `sparing`), after `beforeEvicting` accepted it. True when one went; its slot is
    /// the caller's.
    private func evict(
        _ oldest: (shard: Int, lastUsed: SessionTime), now: SessionTime, sparing: SessionID?,
        beforeEvicting: (SessionID) throws(SessionStoreError) -> Void
    ) throws(SessionStoreError) -> Bool {
        guard now.milliseconds(since: oldest.lastUsed) >= evictionIdle else { return false }
        let evictionIdle = evictionIdle
        return try withShard(at: oldest.shard) { shard throws(SessionStoreError) -> Bool in
            guard let victim = shard.leastRecentlyUsed, now.milliseconds(since: victim.lastUsed) >= evictionIdle,
                !victim.isPinned, victim.id != sparing
            else {
                return false
            }
            sessionsExaminedWhenFull.add(1, ordering: .relaxed)
            try beforeEvicting(victim.id)
            shard.remove(victim.id)
            evictedCount.add(1, ordering: .relaxed)
            return true
        }
    }

    /// Whole seconds (1 to a day) until a session last used at `oldest` can be evicted or expires.
    private func retryAfterSeconds(oldest: SessionTime?, now: SessionTime) -> Int {
        guard let oldest else { return 1 }
        let remaining = min(evictionIdle, timeToLive) - now.milliseconds(since: oldest)
        let seconds = remaining / 1000 + (remaining % 1000 > 0 ? 1 : 0)  // rounded up, no overflow near Int64.max
        return Int(min(max(1, seconds), 86_400))
    }

    /// Gives back `slots` (a removed session, or a reservation that was not used).
    package func releaseSlots(_ slots: Int = 1) {
        if slots > 0 { liveCount.subtract(slots, ordering: .relaxed) }
    }

    /// Removes every session expired at `now`; returns how many went. O(expired + shards): each
    /// shard is walked from its least recently used end up to its first session that has not
    /// expired or is pinned.
    @discardableResult
    package func removeExpired(now: SessionTime) -> Int {
        var dropped = 0
        let timeToLive = timeToLive
        for index in 0 ..< Self.shardCount {
            dropped += withShard(at: index) { $0.removeExpired(now: now, timeToLive: timeToLive, limit: .max).removed }
        }
        releaseSlots(dropped)
        expiredCount.add(dropped, ordering: .relaxed)
        return dropped
    }

    /// The figures a metrics scrape reads: five relaxed loads.
    package var counts: SessionCounts {
        SessionCounts(
            held: count, created: createdCount.load(ordering: .relaxed), expired: expiredCount.load(ordering: .relaxed),
            evicted: evictedCount.load(ordering: .relaxed), bytes: bytes, memoryBudget: memoryBudget)
    }

    /// Inserts a new session into the slot ``reserveSlot(now:beforeEvicting:)`` took for it (a
    /// write on its shard, with that write's expiry sweep) and counts it created.
    package func insertNew(_ id: SessionID, _ entry: Entry, now: SessionTime) {
        withShardForWrite(of: id, now: now) { $0.insert(id, entry) }
        createdCount.add(1, ordering: .relaxed)
    }
}

/// A session table's figures at one moment, for metrics.
///
/// Invariant: `held` is the table's ``SessionTable/count`` (expired sessions not yet removed
/// included); `created`, `expired` and `evicted` only grow while the store lives; `bytes` is what
/// the sessions held count for against `memoryBudget` (nil when the store has none).
package struct SessionCounts: Sendable, Equatable {
    package var held: Int
    package var created: Int
    package var expired: Int
    package var evicted: Int
    package var bytes: Int
    package var memoryBudget: Int?
    /// The bytes the sessions count for in a store shared by several instances (Redis, across the
    /// prefix) against ``memoryBudget``; nil for a store of this process alone.
    package var storeBytes: Int?

    package init(
        held: Int = 0, created: Int = 0, expired: Int = 0, evicted: Int = 0, bytes: Int = 0, memoryBudget: Int? = nil
    ) {
        self.held = held
        self.created = created
        self.expired = expired
        self.evicted = evicted
        self.bytes = bytes
        self.memoryBudget = memoryBudget
    }
}
