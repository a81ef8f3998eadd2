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
/// Invariant: at most `capacity` entries; a new session when full drops the whole table (an entry
/// only saves a round trip). Memory: per entry its record's bytes plus the decoded state.
/// Cost: one short lock per lookup or store.
final class WriteBasis<Value: Sendable>: Sendable {
    private let entries = Mutex<[SessionID: Value]>([:])
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    func value(of id: SessionID) -> Value? { entries.withLock { $0[id] } }

    func keep(_ value: Value, of id: SessionID) {
        entries.withLock { entries in
            if entries.count >= capacity, entries[id] == nil { entries.removeAll(keepingCapacity: true) }
            entries[id] = value
        }
    }

    func forget(_ id: SessionID) { entries.withLock { _ = $0.removeValue(forKey: id) } }
}
