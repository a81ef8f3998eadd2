import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A counter that many threads change often and one thread reads rarely (requests in flight):
/// each thread owns a cell of its own, on cache lines nothing else uses, and is the only writer
/// of that cell, so an add is a plain load and store (no locked instruction, no shared line).
///
/// Invariant: ``sum`` is the total of every `add` that happened before it (each cell is written
/// by one thread only; a cell may go negative when one thread adds and another subtracts). A
/// thread's cell is made on its first `add` and kept, with its count, until the counter dies.
/// Each counter takes a pthread key while it lives; when the process has none left (about a
/// thousand), the counter is one shared atomic instead: slower, still exact.
/// Cost: `add` is one `pthread_getspecific`, one load and one store; `sum` is O(threads seen).
final class ThreadShardedCounter: Sendable {
    /// Cells sit on their own 128-byte blocks (two cache lines), so no two threads share a line.
    private static var cellBytes: Int { 128 }

    /// A thread's cell, as an address the cell list can hold.
    private struct Cell: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<Atomic<Int>>
    }

    /// The calling thread's cell, in a key of this counter (deleted with it); nil when no key
    /// was left, and every add goes to ``shared``.
    private let key: pthread_key_t?
    /// Every cell made so far; added to under the lock, read by ``sum``.
    private let cells = Mutex<[Cell]>([])
    /// The count when there is no key.
    private let shared = Atomic<Int>(0)

    /// A counter with a cell per thread; with `threadCells` false (or no pthread key left), one
    /// shared atomic.
    init(threadCells: Bool = true) {
        var key = pthread_key_t()
        self.key = threadCells && pthread_key_create(&key, nil) == 0 ? key : nil
    }

    deinit {
        if let key { pthread_key_delete(key) }
        cells.withLock { cells in
            for cell in cells {
                cell.pointer.deinitialize(count: 1)
                UnsafeMutableRawPointer(cell.pointer).deallocate()
            }
        }
    }

    /// Adds `delta` to the calling thread's cell.
    func add(_ delta: Int) {
        guard let key else {
            shared.wrappingAdd(delta, ordering: .releasing)
            return
        }
        let cell = pthread_getspecific(key)?.assumingMemoryBound(to: Atomic<Int>.self) ?? makeCell(key)
        // Only this thread writes the cell: a load and a store cannot lose another writer's add.
        cell.pointee.store(cell.pointee.load(ordering: .relaxed) &+ delta, ordering: .releasing)
    }

    /// The total over all cells.
    var sum: Int {
        cells.withLock { $0.reduce(shared.load(ordering: .acquiring)) { $0 &+ $1.pointer.pointee.load(ordering: .acquiring) } }
    }

    /// Whether adds go to per-thread cells (false when made without them or when no pthread key was left).
    var hasThreadCells: Bool { key != nil }

    /// Threads that have added so far (one cell each).
    var threadCount: Int {
        cells.withLock { $0.count }
    }

    /// Makes, registers and stores the calling thread's cell.
    private func makeCell(_ key: pthread_key_t) -> UnsafeMutablePointer<Atomic<Int>> {
        let cell = UnsafeMutableRawPointer.allocate(byteCount: Self.cellBytes, alignment: Self.cellBytes)
            .bindMemory(to: Atomic<Int>.self, capacity: 1)
        cell.initialize(to: Atomic(0))
        cells.withLock { $0.append(Cell(pointer: cell)) }
        guard pthread_setspecific(key, cell) == 0 else { fatalError("pthread_setspecific failed") }
        return cell
    }
}
