import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A fixed set of counters (slots `0 ..< slotCount`) that many threads add to often and one
/// thread reads rarely (a scrape, requests in flight at shutdown): each thread owns a block of
/// cells of its own, on cache lines no other thread writes, and is the only writer of its block,
/// so an add is a plain load and store (no lock, no locked instruction, no shared line). One
/// `pthread_getspecific` finds the block, and ``withCells(_:)`` lets a caller do several adds with
/// that one look-up.
///
/// Invariant: ``totals()`` (and ``total(of:)``) holds, per slot, the sum of every add that happened
/// before it (each cell is written by one thread only; a cell may go negative when one thread adds
/// and another subtracts). A thread's block is made on its first add and kept, with its counts,
/// until the counters die (threads come and go rarely here: libmicrohttpd's pool is fixed). Each
/// set of counters takes a pthread key while it lives; when the process has none left (about a
/// thousand), every add goes to one shared block of atomics instead: slower, still exact.
/// Cost: an add is one `pthread_getspecific`, one load and one store (release); ``totals()`` is
/// O(threads seen × slots), ``total(of:)`` O(threads seen).
package final class ThreadShardedCounters: Sendable {
    /// A thread's block, as an address the block list can hold.
    private struct Block: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<Atomic<Int>>
    }

    package let slotCount: Int
    /// Each block is rounded up to whole 128-byte spans (two cache lines) and aligned to one.
    private let blockBytes: Int
    /// The calling thread's block, in a key of these counters (deleted with them); nil when no
    /// key was left, and every add goes to ``shared``.
    private let key: pthread_key_t?
    /// Every block made so far; appended to under the lock, read by ``totals()``.
    private let blocks = Mutex<[Block]>([])
    /// The counts when there is no key.
    private let shared: Block

    /// Counters with a block per thread; with `threadCells` false (or no pthread key left), one
    /// shared block of atomics.
    package init(slots: Int, threadCells: Bool = true) {
        precondition(slots > 0, "ThreadShardedCounters needs at least one slot")
        slotCount = slots
        blockBytes = (slots * MemoryLayout<Atomic<Int>>.stride + 127) / 128 * 128
        var key = pthread_key_t()
        self.key = threadCells && pthread_key_create(&key, nil) == 0 ? key : nil
        shared = Self.makeBlock(bytes: blockBytes, slots: slots)
    }

    deinit {
        if let key { pthread_key_delete(key) }
        for block in blocks.withLock({ $0 }) + [shared] {
            block.pointer.deinitialize(count: slotCount)
            UnsafeMutableRawPointer(block.pointer).deallocate()
        }
    }

    /// The calling thread's block, to be used inside ``withCells(_:)`` only (on that thread).
    package struct Cells {
        fileprivate let base: UnsafeMutablePointer<Atomic<Int>>
        /// Whether this thread owns the block (false: the shared block, added to atomically).
        fileprivate let owned: Bool

        fileprivate init(base: UnsafeMutablePointer<Atomic<Int>>, owned: Bool) {
            self.base = base
            self.owned = owned
        }

        /// Adds `delta` to slot `slot` (which must be below the counters' `slotCount`).
        @inline(__always)
        package func add(_ delta: Int, to slot: Int) {
            let cell = base + slot
            if owned {
                // Only this thread writes the cell: a load and a store cannot lose another writer's add.
                cell.pointee.store(cell.pointee.load(ordering: .relaxed) &+ delta, ordering: .releasing)
            } else {
                cell.pointee.wrappingAdd(delta, ordering: .releasing)
            }
        }
    }

    /// Runs `body` with the calling thread's cells (one look-up for all of its adds).
    @inline(__always)
    package func withCells<Result>(_ body: (Cells) -> Result) -> Result {
        guard let key else { return body(Cells(base: shared.pointer, owned: false)) }
        let base = pthread_getspecific(key)?.assumingMemoryBound(to: Atomic<Int>.self) ?? makeThreadBlock(key)
        return body(Cells(base: base, owned: true))
    }

    /// Adds `delta` to slot `slot` of the calling thread's block.
    package func add(_ delta: Int, to slot: Int) {
        withCells { $0.add(delta, to: slot) }
    }

    /// Each slot's total over every thread's block.
    package func totals() -> [Int] {
        var sums = [Int](repeating: 0, count: slotCount)
        for block in blocks.withLock({ $0 }) + [shared] {
            for slot in 0 ..< slotCount { sums[slot] &+= (block.pointer + slot).pointee.load(ordering: .acquiring) }
        }
        return sums
    }

    /// Slot `slot`'s total over every thread's block, without an array.
    package func total(of slot: Int) -> Int {
        blocks.withLock { blocks in
            blocks.reduce((shared.pointer + slot).pointee.load(ordering: .acquiring)) {
                $0 &+ ($1.pointer + slot).pointee.load(ordering: .acquiring)
            }
        }
    }

    /// Whether adds go to per-thread blocks (false when made without them or when no pthread key was left).
    package var hasThreadCells: Bool { key != nil }

    /// Threads that have added so far (one block each).
    package var threadCount: Int { blocks.withLock { $0.count } }

    private static func makeBlock(bytes: Int, slots: Int) -> Block {
        let block = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 128)
            .bindMemory(to: Atomic<Int>.self, capacity: slots)
        for slot in 0 ..< slots { (block + slot).initialize(to: Atomic(0)) }
        return Block(pointer: block)
    }

    /// Makes, registers and stores the calling thread's block.
    private func makeThreadBlock(_ key: pthread_key_t) -> UnsafeMutablePointer<Atomic<Int>> {
        let block = Self.makeBlock(bytes: blockBytes, slots: slotCount)
        blocks.withLock { $0.append(block) }
        guard pthread_setspecific(key, block.pointer) == 0 else { fatalError("pthread_setspecific failed") }
        return block.pointer
    }
}
