import MenuSessions
import Synchronization

/// The per-instance copy of sessions read through connections Redis tracks (client-side caching),
/// valid only while the invalidation listener that receives Redis's invalidations is subscribed.
///
/// Invariant: an entry is served only while ``tracking`` is set and its generation is the one
/// the listener reports now (`currentGeneration`), and every entry was filled under that same
/// generation: ``subscribed(clientID:generation:)`` and ``flush()`` clear everything, and a fill
/// begun before a clear is refused. A fill is a two-step protocol that closes the race with
/// invalidations: ``beginFill(_:)`` puts a placeholder for the key before the read is sent;
/// ``invalidate(_:)`` removes entry and placeholder alike; ``finishFill(_:_:)`` installs the read
/// value only when its own placeholder is still there and no clear came in between. So a value
/// read before a write of another client is never installed after that write's invalidation.
///
/// Bounded: at most `capacity` entries and `byteCapacity` bytes of values (by `weigh`), spread
/// over ``shardCount`` shards each behind its own `Mutex`; a full shard evicts by the clock
/// (second-chance) rule: an entry read since the hand last passed is skipped once. Placeholders
/// live apart, at most ``pendingPerShard`` a shard: a read of an id that names no session (any id
/// a client invents) never takes a real session's place, and past that many reads in flight a
/// read is simply not cached. Cost: a lookup or a fill is one hash lookup under one shard lock
/// plus the tracking lock; an eviction moves the hand over at most the shard's entries twice.
/// Memory: the values plus about 64 bytes of slot and index per entry.
package final class SessionCache<Value: Sendable>: Sendable {
    /// The listener subscription entries belong to: the connection `CLIENT TRACKING … REDIRECT`
    /// names, and the listener's generation (a new one after each reconnect).
    package struct Tracking: Sendable, Equatable {
        package var clientID: Int
        package var generation: Int
    }

    /// What ``beginFill(_:)`` hands the reader: the placeholder's token and the subscription the
    /// read must be tracked under (register the connection for it before reading).
    package struct Fill: Sendable {
        package var id: SessionID
        package var token: UInt64
        package var clear: UInt64
        package var tracking: Tracking
    }

    package static var shardCount: Int { 16 }
    /// Placeholders (reads and writes in flight) one shard holds at most.
    package static var pendingPerShard: Int { 256 }
    package let capacity: Int
    /// Bytes of values (by `weigh`) the cache holds at most.
    package let byteCapacity: Int
    private let perShard: Int
    private let bytesPerShard: Int
    private let weigh: @Sendable (Value) -> Int
    private let shards: [Shard]
    private let state = Mutex<(tracking: Tracking?, nextToken: UInt64)>((nil, 1))
    /// Clears so far: a fill begun before one is refused.
    private let clears = Atomic<UInt64>(0)
    private let currentGeneration: @Sendable () -> Int?

    /// `currentGeneration` answers the listener's subscription generation now (nil while it is down);
    /// `weigh` the bytes a value holds.
    package init(
        capacity: Int, byteCapacity: Int = .max, weigh: @escaping @Sendable (Value) -> Int = { _ in 0 },
        currentGeneration: @escaping @Sendable () -> Int?
    ) {
        self.capacity = max(capacity, Self.shardCount)
        perShard = self.capacity / Self.shardCount
        self.byteCapacity = byteCapacity
        bytesPerShard = byteCapacity / Self.shardCount
        self.weigh = weigh
        shards = (0 ..< Self.shardCount).map { _ in Shard() }
        self.currentGeneration = currentGeneration
    }

    /// The subscription in force, when the cache may be used: set, and the listener's current one.
    package var tracking: Tracking? {
        guard let tracking = state.withLock({ $0.tracking }), currentGeneration() == tracking.generation else {
            return nil
        }
        return tracking
    }

    /// Entries and placeholders held.
    package var count: Int { shards.reduce(0) { $0 + $1.slots.withLock { $0.entries.count + $0.pending.count } } }

    /// Bytes of the values held (by `weigh`).
    package var bytes: Int { shards.reduce(0) { $0 + $1.slots.withLock { $0.bytes } } }

    private func shard(of id: SessionID) -> Shard { shards[Int(id.low % UInt64(Self.shardCount))] }

    /// The cached value of `id`, when the cache may be used and holds one.
    package func value(of id: SessionID) -> Value? {
        guard tracking != nil else { return nil }
        return shard(of: id).slots.withLock { $0.value(of: id) }
    }

    /// Puts a placeholder for `id` (replacing its entry or another placeholder) before a read or a
    /// write is sent; nil when the cache may not be used now (read from Redis, fill nothing).
    package func beginFill(_ id: SessionID) -> Fill? {
        let clear = clears.load(ordering: .acquiring)
        let token = state.withLock { state in
            state.nextToken += 1
            return state.nextToken
        }
        // No room for another placeholder: this read is not cached.
        guard shard(of: id).slots.withLock({ $0.putPending(id, token) }) else { return nil }
        // Read after the placeholder is in: a clear from here on refuses this fill.
        guard let tracking else {
            cancelFill(id, token: token)
            return nil
        }
        return Fill(id: id, token: token, clear: clear, tracking: tracking)
    }

    /// Installs `value` read under `fill` when its placeholder is still there and no clear came
    /// since; true when installed.
    @discardableResult
    package func finishFill(_ fill: Fill, _ value: Value) -> Bool {
        shard(of: fill.id).slots.withLock { slots in
            guard slots.isPending(fill.id, token: fill.token) else { return false }
            guard clears.load(ordering: .acquiring) == fill.clear else {
                slots.remove(fill.id)
                return false
            }
            slots.put(fill.id, value, bytes: weigh(value), limits: (perShard, bytesPerShard))
            return true
        }
    }

    /// Removes `fill`'s placeholder if it is still there (the read or write failed).
    package func cancelFill(_ fill: Fill) { cancelFill(fill.id, token: fill.token) }

    private func cancelFill(_ id: SessionID, token: UInt64) {
        shard(of: id).slots.withLock { slots in if slots.isPending(id, token: token) { slots.remove(id) } }
    }

    /// Forgets `id`'s entry or placeholder (Redis said another client changed it).
    package func invalidate(_ id: SessionID) {
        shard(of: id).slots.withLock { $0.remove(id) }
    }

    /// Replaces `id`'s cached value by `transform`'s result (nil removes it) when it is cached;
    /// what a carry-over to a new menu and a TTL refresh use.
    package func update(_ id: SessionID, _ transform: (Value) -> Value?) {
        shard(of: id).slots.withLock { slots in
            guard let value = slots.value(of: id) else { return }
            if let new = transform(value) {
                slots.put(id, new, bytes: weigh(new), limits: (perShard, bytesPerShard))
            } else {
                slots.remove(id)
            }
        }
    }

    /// The ids cached now (placeholders aside), for a pass over every entry.
    package var cachedIDs: [SessionID] { shards.flatMap { $0.slots.withLock { $0.cachedIDs } } }

    /// Forgets everything and refuses fills begun before: Redis flushed, or the listener is lost
    /// (its invalidations could have been missed). Entries come back through reads under the next
    /// subscription.
    package func flush() {
        clears.add(1, ordering: .acquiringAndReleasing)
        for shard in shards { shard.slots.withLock { $0.removeAll() } }
    }

    /// A new subscription (the first, or after the listener reconnected): nothing filled under the
    /// old one may stay, and entries are filled under this one from now on.
    package func subscribed(clientID: Int, generation: Int) {
        state.withLock { $0.tracking = nil }
        flush()
        state.withLock { $0.tracking = Tracking(clientID: clientID, generation: generation) }
    }

    private final class Shard: Sendable {
        let slots = Mutex(CacheSlots<Value>())
    }
}

/// One shard of a ``SessionCache``: values in an array the clock hand walks, an index by id, and
/// apart from them the placeholders of fills in flight.
/// Invariants: `index[id] == i` exactly when `entries[i].id == id`; an id is in `entries` or in
/// `pending`, never both; `bytes` is the sum of the entries' `bytes`.
struct CacheSlots<Value: Sendable>: Sendable {
    struct Slot: Sendable {
        var id: SessionID
        var value: Value
        var bytes: Int
        var referenced: Bool
    }

    var entries: [Slot] = []
    var index: [SessionID: Int] = [:]
    /// Fills in flight: the token of each.
    var pending: [SessionID: UInt64] = [:]
    var hand = 0
    var bytes = 0

    mutating func value(of id: SessionID) -> Value? {
        guard let position = index[id] else { return nil }
        entries[position].referenced = true
        return entries[position].value
    }

    func isPending(_ id: SessionID, token: UInt64) -> Bool { pending[id] == token }

    var cachedIDs: [SessionID] { entries.map(\.id) }

    /// Puts a placeholder for `id` in place of its entry or placeholder; false, changing nothing,
    /// when ``SessionCache/pendingPerShard`` other placeholders are held.
    mutating func putPending(_ id: SessionID, _ token: UInt64) -> Bool {
        guard pending[id] != nil || pending.count < SessionCache<Value>.pendingPerShard else { return false }
        removeEntry(id)
        pending[id] = token
        return true
    }

    /// Sets `id`'s value (replacing its entry or placeholder), evicting by the clock while the
    /// shard holds more than `limits.entries` entries or `limits.bytes` bytes.
    mutating func put(_ id: SessionID, _ value: Value, bytes size: Int, limits: (entries: Int, bytes: Int)) {
        pending[id] = nil
        if let position = index[id] {
            bytes += size - entries[position].bytes
            entries[position].value = value
            entries[position].bytes = size
        } else {
            index[id] = entries.count
            entries.append(Slot(id: id, value: value, bytes: size, referenced: false))
            bytes += size
        }
        while entries.count > 1, entries.count > limits.entries || bytes > limits.bytes { evictOne(sparing: id) }
        if bytes > limits.bytes { removeEntry(id) }  // alone over the shard's bytes: not kept
    }

    mutating func remove(_ id: SessionID) {
        pending[id] = nil
        removeEntry(id)
    }

    private mutating func removeEntry(_ id: SessionID) {
        guard let position = index.removeValue(forKey: id) else { return }
        bytes -= entries[position].bytes
        let last = entries.removeLast()
        if position < entries.count {
            entries[position] = last
            index[last.id] = position
        }
        if hand >= entries.count { hand = 0 }
    }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        index.removeAll(keepingCapacity: true)
        pending.removeAll(keepingCapacity: true)
        hand = 0
        bytes = 0
    }

    /// Removes the first entry at or after the hand not read since the hand last passed it
    /// (never `sparing`, the one just put), clearing the marks it passes. At most two turns.
    private mutating func evictOne(sparing: SessionID) {
        guard entries.count > 1 else { return }
        while true {
            if hand >= entries.count { hand = 0 }
            if entries[hand].referenced || entries[hand].id == sparing {
                entries[hand].referenced = false
                hand += 1
            } else {
                removeEntry(entries[hand].id)
                return
            }
        }
    }
}
