import MenuSessions
import Synchronization

/// The last copy of each session this instance wrote (or was handed back by a refused write),
/// kept as the starting point of its next write of that session when the invalidated cache has
/// none: Redis reports every write to the listener, the writer's own included, so the copy a write
/// leaves in the cache is dropped moments later, and without this each write would read the
/// session back first (a second round trip).
///
/// Never answers a read. A write computed on it goes through the compare-and-set script, which
/// refuses it when another writer moved the session on (the write is then computed again on the
/// record the script hands back), and a refusal or a no-op decided on it is decided again on a copy
/// read from Redis, exactly as on a cached copy that may be stale.
///
/// Invariant: at most `capacity` entries and `byteCapacity` bytes of values (by `weigh`); a new
/// session when full drops the whole table (an entry only saves a round trip). Memory: per entry
/// its record's bytes plus the decoded state. Cost: one short lock per lookup or store.
final class WriteBasis<Value: Sendable>: Sendable {
    private struct Table: Sendable {
        var entries: [SessionID: (value: Value, bytes: Int)] = [:]
        var bytes = 0
    }

    private let table = Mutex(Table())
    let capacity: Int
    let byteCapacity: Int
    private let weigh: @Sendable (Value) -> Int

    init(capacity: Int, byteCapacity: Int = .max, weigh: @escaping @Sendable (Value) -> Int = { _ in 0 }) {
        self.capacity = capacity
        self.byteCapacity = byteCapacity
        self.weigh = weigh
    }

    func value(of id: SessionID) -> Value? { table.withLock { $0.entries[id]?.value } }

    /// Bytes of the values held (by `weigh`).
    var bytes: Int { table.withLock { $0.bytes } }

    func keep(_ value: Value, of id: SessionID) {
        let size = weigh(value)
        table.withLock { table in
            let replaced = table.entries.removeValue(forKey: id)?.bytes ?? 0
            table.bytes -= replaced
            if table.entries.count >= capacity || table.bytes + size > byteCapacity {
                table.entries.removeAll(keepingCapacity: true)
                table.bytes = 0
            }
            guard size <= byteCapacity else { return }
            table.entries[id] = (value, size)
            table.bytes += size
        }
    }

    func forget(_ id: SessionID) {
        table.withLock { table in
            if let removed = table.entries.removeValue(forKey: id) { table.bytes -= removed.bytes }
        }
    }
}
