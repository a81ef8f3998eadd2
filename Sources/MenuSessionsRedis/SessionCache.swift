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
/// Bounded: at most `capacity` entries (placeholders count), spread over ``shardCount`` shards
/// each behind its own `Mutex`; a full shard evicts by the clock (second-chance) rule: an entry
/// read since the hand last passed is skipped once. Cost: a lookup or a fill is one hash lookup
/// under one shard lock plus the tracking lock; an eviction moves the hand over at most the
/// shard's entries twice. Memory: the values plus about 64 bytes of slot and index per entry.
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
    package let capacity: Int
    private let perShard: Int
    private let shards: [Shard]
    private let state = Mutex<(tracking: Tracking?, nextToken: UInt64)>((nil, 1))
    /// Clears so far: a fill begun before one is refused.
    private let clears = Atomic<UInt64>(0)
    private let currentGeneration: @Sendable () -> Int?

    /// `currentGeneration` answers the listener's subscription generation now (nil while it is down).
    package init(capacity: Int, currentGeneration: @escaping @Sendable () -> Int?) {
        self.capacity = max(capacity, Self.shardCount)
        perShard = self.capacity / Self.shardCount
        shards = (0 ..< Self.shardCount).map { _ in Shard() }
        self.currentGeneration = currentGeneration
    }

    /// The subscription in force, when the cache may be used: set, and the listener's current one.
    package var tracking: Tracking? {
        guard let tracking = state.withLock({ $0.tracking }), currentGeneration() == tracking.generation else { return nil }
        return tracking
    }

    /// Entries and placeholders held.
    package var count: Int { shards.reduce(0) { $0 + $1.slots.withLock { $0.entries.count } } }

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
        shard(of: id).slots.withLock { $0.put(id, .pending(token), perShard: perShard) }
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
            slots.put(fill.id, .cached(value), perShard: perShard)
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
            if let new = transform(value) { slots.put(id, .cached(new), perShard: perShard) } else { slots.remove(id) }
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

/// One shard of a ``SessionCache``: slots in an array the clock hand walks, and an index by id.
/// Invariant: `index[id] == i` exactly when `entries[i].id == id`.
struct CacheSlots<Value: Sendable>: Sendable {
    enum Content: Sendable {
        case pending(UInt64)
        case cached(Value)
    }

    struct Slot: Sendable {
        var id: SessionID
        var content: Content
        var referenced: Bool
    }

    var entries: [Slot] = []
    var index: [SessionID: Int] = [:]
    var hand = 0

    mutating func value(of id: SessionID) -> Value? {
        guard let position = index[id], case .cached(let value) = entries[position].content else { return nil }
        entries[position].referenced = true
        return value
    }

    func isPending(_ id: SessionID, token: UInt64) -> Bool {
        guard let position = index[id], case .pending(let held) = entries[position].content else { return false }
        return held == token
    }

    var cachedIDs: [SessionID] {
        entries.compactMap { slot in if case .cached = slot.content { slot.id } else { nil } }
    }

    /// Sets `id`'s content, evicting by the clock when the shard is full and `id` is new.
    mutating func put(_ id: SessionID, _ content: Content, perShard: Int) {
        if let position = index[id] {
            entries[position].content = content
            return
        }
        if entries.count >= perShard { evictOne() }
        index[id] = entries.count
        entries.append(Slot(id: id, content: content, referenced: false))
    }

    mutating func remove(_ id: SessionID) {
        guard let position = index.removeValue(forKey: id) else { return }
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
        hand = 0
    }

    /// Removes the first entry at or after the hand not read since the hand last passed it,
    /// clearing the marks it passes. At most two turns.
    private mutating func evictOne() {
        guard !entries.isEmpty else { return }
        while true {
            if hand >= entries.count { hand = 0 }
            if entries[hand].referenced {
                entries[hand].referenced = false
                hand += 1
            } else {
                remove(entries[hand].id)
                return
            }
        }
    }
}
