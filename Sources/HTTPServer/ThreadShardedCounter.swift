import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A counter that many threads change often and one thread reads rarely (requests in flight):
/// each thread adds to its own shard, on cache lines no other shard uses, so an add is an
/// uncontended atomic on a line that stays in the adding core's cache.
///
/// Invariant: ``sum`` is the total of every `add` that happened before it (each shard is exact;
/// a shard may go negative when one thread adds and another subtracts). A thread's shard is
/// fixed for its life: thread `k` (in order of first use) uses shard `k % shardCount`.
/// Cost: `add` is one `pthread_getspecific` and one relaxed atomic add; `sum` is O(shardCount).
final class ThreadShardedCounter: Sendable {
    static let shardCount = 16
    /// Shards sit this many `Atomic<Int>` strides apart: 128 bytes, two cache lines.
    private static let spacing = 16

    /// `shardCount * spacing` atomics, shard `k` at `k * spacing`; the rest is padding. Raw
    /// memory rather than an array, so an add retains nothing shared.
    private nonisolated(unsafe) let slots: UnsafeMutablePointer<Atomic<Int>>

    init() {
        slots = .allocate(capacity: Self.shardCount * Self.spacing)
        for slot in 0 ..< Self.shardCount * Self.spacing { (slots + slot).initialize(to: Atomic(0)) }
    }

    deinit {
        slots.deinitialize(count: Self.shardCount * Self.spacing)
        slots.deallocate()
    }

    /// Adds `delta` to the calling thread's shard.
    func add(_ delta: Int) {
        slots[Self.threadSlot() % Self.shardCount * Self.spacing].add(delta, ordering: .relaxed)
    }

    /// The total over all shards.
    var sum: Int {
        (0 ..< Self.shardCount).reduce(0) { $0 + slots[$1 * Self.spacing].load(ordering: .acquiring) }
    }

    /// Threads that have asked for a slot so far; the next one gets this number.
    private static let nextSlot = Atomic<Int>(0)

    /// The calling thread's slot number + 1 (0: none yet), in a pthread key so it costs a load.
    private static let slotKey: pthread_key_t = {
        var key = pthread_key_t()
        guard pthread_key_create(&key, nil) == 0 else { fatalError("pthread_key_create failed") }
        return key
    }()

    /// This thread's slot, assigned on its first call.
    static func threadSlot() -> Int {
        if let stored = pthread_getspecific(slotKey) { return Int(bitPattern: stored) - 1 }
        let slot = nextSlot.add(1, ordering: .relaxed).oldValue
        pthread_setspecific(slotKey, UnsafeRawPointer(bitPattern: slot + 1))
        return slot
    }
}
