import Synchronization

/// What a ``SessionTable`` holds per session: anything with a time of last use, which orders the
/// shard's least-recently-used list, and the bytes it holds on the heap, which the table's byte
/// budget counts.
package protocol SessionTableEntry: Sendable {
    var lastUsed: SessionTime { get set }
    /// Bytes the entry holds on the heap beyond its inline part (its arrays' storage). O(depth) at most.
    var heapBytes: Int { get }
    /// True while the session must not be removed, expired or not (the durable store's write in
    /// flight); expiry and eviction stop at it. False unless an entry says otherwise.
    var isPinned: Bool { get }
}

extension SessionTableEntry {
    package var isPinned: Bool { false }
}

/// The bytes a ``SessionTable``'s sessions hold together, which every shard adds its changes to:
/// one relaxed atomic, read without a lock.
package final class SessionBytes: Sendable {
    private let total = Atomic<Int>(0)

    package init() {}

    package var value: Int { total.load(ordering: .relaxed) }

    func add(_ delta: Int) {
        if delta != 0 { total.add(delta, ordering: .relaxed) }
    }
}

/// One shard of a ``SessionTable``: its sessions in a dictionary by id, and beside it a doubly
/// linked list (by id, in a second dictionary) from the most to the least recently used.
///
/// A use moves its session to the front only when its last move is `promotionInterval` or more
/// ago (lazy promotion): a session in steady use costs the one hash lookup and a time stamp in
/// its own entry, as a plain dictionary would (the links stay out of the entries, which keeps
/// them small), and the list is looked at (three or four probes) only once per interval. The
/// list is in use order to within that interval.
///
/// Invariants: the list holds every session exactly once; along it from `newest` to `oldest`,
/// each node's `promoted` never increases, and 0 ≤ `lastUsed` − `promoted` < `promotionInterval`
/// (or = 0), as long as callers mark uses with a clock that never goes backwards
/// (``markUsed(at:now:)``, ``insert(_:_:)`` with a fresh time). So the oldest session's
/// `lastUsed` is within `promotionInterval` of the shard's least recent use.
/// Cost: a lookup one hash probe; a use O(1) (plus three probes when it moves); an insert or a
/// removal O(1) (three or four probes); the oldest session O(1).
package struct SessionShard<Entry: SessionTableEntry>: Sendable {
    fileprivate struct Node: Sendable {
        /// nil only between ``take(at:)`` and ``restore(_:at:)``.
        var entry: Entry?
        /// When the session last moved to the front of the list.
        var promoted: SessionTime
        /// The session's bytes as last counted into ``bytes`` (``footprint(of:)``).
        var bytes: Int
    }

    /// A session's neighbours on the list.
    private struct Links: Sendable {
        var newer: SessionID?
        var older: SessionID?
    }

    /// Where a session sits in the shard: valid until a session is inserted or removed.
    package struct Position {
        fileprivate let index: Dictionary<SessionID, Node>.Index
    }

    private var nodes: [SessionID: Node] = [:]
    /// The list: exactly the keys of `nodes`.
    private var links: [SessionID: Links] = [:]
    private var newest: SessionID?
    private var oldest: SessionID?
    /// Milliseconds a session stays where it is on the list after a move to the front.
    package let promotionInterval: Int64
    /// Where every change of the sessions' bytes is added (shared by the table's shards).
    private let meter: SessionBytes

    package init(promotionInterval: Int64, meter: SessionBytes = SessionBytes()) {
        self.promotionInterval = promotionInterval
        self.meter = meter
    }

    /// A shard holding `entries`, ordered by `lastUsed` (the oldest is the first to be evicted).
    package init(_ entries: [SessionID: Entry], promotionInterval: Int64, meter: SessionBytes = SessionBytes()) {
        self.promotionInterval = promotionInterval
        self.meter = meter
        nodes.reserveCapacity(entries.count)
        links.reserveCapacity(entries.count)
        for (id, entry) in entries.sorted(by: { $0.value.lastUsed < $1.value.lastUsed }) { insert(id, entry) }
    }

    /// Sessions held.
    package var count: Int { nodes.count }

    /// What one session costs the shard besides its entry's heap bytes: its places in the two
    /// dictionaries (id, node, links), counted twice for the dictionaries' free places (they grow
    /// by doubling at three quarters full).
    package static var overheadPerSession: Int {
        2 * (2 * MemoryLayout<SessionID>.stride + MemoryLayout<Node>.stride + MemoryLayout<Links>.stride)
    }

    /// The bytes a session holding `entry` counts for: its heap bytes and ``overheadPerSession``.
    package static func footprint(of entry: Entry) -> Int { entry.heapBytes + overheadPerSession }

    /// Counts the session at `index` again after its entry changed.
    private mutating func recount(_ index: Dictionary<SessionID, Node>.Index) {
        guard let entry = nodes.values[index].entry else { return }
        let bytes = Self.footprint(of: entry)
        meter.add(bytes - nodes.values[index].bytes)
        nodes.values[index].bytes = bytes
    }

    /// Where `id` sits, if the shard holds it. One hash probe.
    package func position(of id: SessionID) -> Position? {
        nodes.index(forKey: id).map(Position.init)
    }

    /// The entry at `position` (from ``position(of:)``), read or changed in place. (A read goes
    /// through the dictionary's in-place access too: its getter would copy the whole node.)
    /// Runs `body` on the entry at `position` in place: the entry is not copied (its state's
    /// arrays are not retained and released), which a read through ``subscript(_:)``'s getter does.
    package mutating func withEntry<Result, Failure: Error>(
        at position: Position, _ body: (inout Entry) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        defer { recount(position.index) }
        return try body(&nodes.values[position.index].entry!)
    }

    /// Runs `body` on the entry at `position` without copying it and, unlike
    /// ``withEntry(at:_:)``, without counting its bytes again afterwards: for a read, which must
    /// not change the entry (a debug build checks that its footprint is unchanged). A read is the
    /// common request; the recount is a walk over the entry's arrays.
    package mutating func reading<Result>(at position: Position, _ body: (inout Entry) -> Result) -> Result {
        #if DEBUG
        let before = nodes.values[position.index].bytes
        defer {
            assert(
                Self.footprint(of: nodes.values[position.index].entry!) == before, "a read changed a session's entry")
        }
        #endif
        return body(&nodes.values[position.index].entry!)
    }

    package subscript(position: Position) -> Entry {
        mutating get { Self.entry(of: &nodes.values[position.index]) }
        _modify {
            defer { recount(position.index) }  // also when the access ends in a throw
            yield &nodes.values[position.index].entry!
        }
        set {
            nodes.values[position.index].entry = newValue
            recount(position.index)
        }
    }

    private static func entry(of node: inout Node) -> Entry { node.entry! }

    /// Takes the entry at `position` out for a change (so its storage is uniquely referenced
    /// while it changes); ``restore(_:at:)`` must put it back before the lock is let go.
    package mutating func take(at position: Position) -> Entry {
        let entry = nodes.values[position.index].entry!
        nodes.values[position.index].entry = nil
        return entry
    }

    /// Puts back the entry ``take(at:)`` took from `position`.
    package mutating func restore(_ entry: Entry, at position: Position) {
        nodes.values[position.index].entry = entry
        recount(position.index)
    }

    /// Where `id` sits when it is held and idle for less than `timeToLive` at `now`, after
    /// recording a use at `now` (``markUsed(at:now:)``); nil otherwise, and nothing changes.
    package mutating func use(_ id: SessionID, now: SessionTime, timeToLive: Int64) -> Position? {
        guard let index = nodes.index(forKey: id) else { return nil }
        switch Self.stamp(&nodes.values[index], now: now, timeToLive: timeToLive, promotionInterval: promotionInterval)
        {
        case nil: return nil
        case false?: break
        case true?: moveToFront(index)
        }
        return Position(index: index)
    }

    /// Records a use of the session at `position` at `now`: its time, and, when its last move
    /// is `promotionInterval` or more ago, a move to the front of the list. O(1).
    package mutating func markUsed(at position: Position, now: SessionTime) {
        if Self.stamp(&nodes.values[position.index], now: now, timeToLive: .max, promotionInterval: promotionInterval)
            == true
        {
            moveToFront(position.index)
        }
    }

    /// Stamps a use at `now` on `node`, in place: nil (and no change) when it is idle for
    /// `timeToLive` or more, else whether it is due to move to the front (then marked moved).
    private static func stamp(_ node: inout Node, now: SessionTime, timeToLive: Int64, promotionInterval: Int64)
        -> Bool?
    {
        guard now.milliseconds(since: node.entry!.lastUsed) < timeToLive else { return nil }
        node.entry!.lastUsed = now
        guard now.milliseconds(since: node.promoted) >= promotionInterval else { return false }
        node.promoted = now
        return true
    }

    private mutating func moveToFront(_ index: Dictionary<SessionID, Node>.Index) {
        let id = nodes.keys[index]
        guard id != newest else { return }
        unlink(links.removeValue(forKey: id)!)
        linkAsNewest(id)
    }

    /// Adds `entry` under `id` (not held yet) as the most recently used.
    package mutating func insert(_ id: SessionID, _ entry: Entry) {
        let bytes = Self.footprint(of: entry)
        nodes[id] = Node(entry: entry, promoted: entry.lastUsed, bytes: bytes)
        meter.add(bytes)
        linkAsNewest(id)
    }

    /// Removes `id`'s session; nil when the shard holds none.
    @discardableResult
    package mutating func remove(_ id: SessionID) -> Entry? {
        position(of: id).map { remove(at: $0) }
    }

    /// Removes the session at `position`.
    @discardableResult
    package mutating func remove(at position: Position) -> Entry {
        let (id, node) = nodes.remove(at: position.index)
        unlink(links.removeValue(forKey: id)!)
        meter.add(-node.bytes)
        return node.entry!
    }

    /// The session at the oldest end of the list, its last use and whether it is pinned, if any:
    /// the least recently used to within `promotionInterval`. O(1).
    package var leastRecentlyUsed: (id: SessionID, lastUsed: SessionTime, isPinned: Bool)? {
        mutating get {
            guard let oldest else { return nil }
            let entry = Self.entry(of: &nodes[oldest]!)
            return (oldest, entry.lastUsed, entry.isPinned)
        }
    }

    /// The bytes the shard's sessions count for together (``footprint(of:)`` each). O(sessions):
    /// for tests, which compare it with the table's running total.
    package var bytes: Int { nodes.values.reduce(0) { $0 + $1.bytes } }

    /// Removes sessions from the least recently used end while they are idle for `timeToLive` or
    /// longer at `now`, looking at `limit` sessions at most; returns how many went and how many
    /// were looked at. (One expired behind a live oldest one waits less than `promotionInterval`;
    /// behind a pinned one, until it is unpinned.)
    package mutating func removeExpired(now: SessionTime, timeToLive: Int64, limit: Int) -> (
        removed: Int, examined: Int
    ) {
        var removed = 0
        var examined = 0
        while let (id, lastUsed, isPinned) = leastRecentlyUsed, examined < limit {
            examined += 1
            guard now.milliseconds(since: lastUsed) >= timeToLive, !isPinned else { break }
            remove(id)
            removed += 1
        }
        return (removed, examined)
    }

    /// Calls `body` with every session, in no particular order.
    package func forEach<Failure: Error>(_ body: (SessionID, Entry) throws(Failure) -> Void) throws(Failure) {
        for (id, node) in nodes { try body(id, node.entry!) }
    }

    /// Joins the neighbours of a session whose `removed` links were just taken out of the list.
    private mutating func unlink(_ removed: Links) {
        if let newer = removed.newer { links[newer]!.older = removed.older } else { newest = removed.older }
        if let older = removed.older { links[older]!.newer = removed.newer } else { oldest = removed.newer }
    }

    /// Puts `id` (not on the list) at its front.
    private mutating func linkAsNewest(_ id: SessionID) {
        links[id] = Links(newer: nil, older: newest)
        if let newest { links[newest]!.newer = id } else { oldest = id }
        newest = id
    }

    #if DEBUG
    /// The ids from the most to the least recently used, after checking the invariants (tests
    /// only): O(sessions).
    package func idsInUseOrder() -> [SessionID] {
        var order: [SessionID] = []
        var next = newest
        var previous: SessionID?
        while let id = next {
            let node = nodes[id]!
            let link = links[id]!
            precondition(node.entry != nil && link.newer == previous)
            let lead = node.entry!.lastUsed.milliseconds(since: node.promoted)
            precondition(lead >= 0 && (lead < promotionInterval || lead == 0))
            precondition(previous.map { !(nodes[$0]!.promoted < node.promoted) } ?? true)
            order.append(id)
            previous = id
            next = link.older
        }
        precondition(previous == oldest && order.count == nodes.count && links.count == nodes.count)
        return order
    }
    #endif
}
