import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Log entries handed over by any thread and written by one thread of its own: a request never
/// formats, writes or waits for a log line. Entries wait in a buffer of at most `capacity`; one
/// that finds the buffer full is dropped and counted (``dropped``), never waited for.
///
/// Invariant: every submitted entry is either written once, in submission order per submitting
/// thread, or counted in ``dropped``; after ``stop()`` returns, everything accepted before it has
/// been written. The buffer is a `Mutex`-guarded array held for one append (a submit) or one
/// swap with the writer's emptied spare (a drain): no allocation while holding it in the steady
/// state, no I/O under it.
/// Cost: `submit` one uncontended lock and an append; the writer wakes every `interval`, formats
/// a drain's entries with one `format` call and writes its lines with one `write(2)`. `submit` is
/// `public` and `@inlinable` so that its body reaches the caller's module, which specializes it
/// for its `Entry` (a `package` function's body is not exported; unspecialized, looking up
/// `[Entry]`'s metadata twice took 650 of its 950 instructions).
public final class BoundedLogQueue<Entry: Sendable>: Sendable {
    public let capacity: Int
    @usableFromInline let pending: Mutex<[Entry]>
    @usableFromInline let droppedCount = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    /// Writer passes completed (a drain, its write, the tick), since start.
    private let passes = Atomic<Int>(0)
    private let stopped = DispatchSemaphore(value: 0)
    /// Appends the lines of a drain's entries, in order.
    private let format: @Sendable ([Entry], inout [UInt8]) -> Void
    private let descriptor: Int32
    private let interval: Duration
    /// Run by the writer thread after each drain (e.g. to notice events worth a line).
    private let tick: (@Sendable () -> Void)?

    /// Starts the writer thread, which writes to `descriptor` (not closed here).
    package init(
        capacity: Int, descriptor: Int32, interval: Duration = .milliseconds(20),
        tick: (@Sendable () -> Void)? = nil, format: @escaping @Sendable ([Entry], inout [UInt8]) -> Void
    ) {
        precondition(capacity > 0)
        self.capacity = capacity
        pending = Mutex([])
        self.format = format
        self.descriptor = descriptor
        self.interval = interval
        self.tick = tick
        pending.withLock { $0.reserveCapacity(capacity) }
        let thread = Thread { [self] in run() }
        thread.name = "log writer"
        thread.start()
    }

    /// Hands `entry` to the writer; false (and counted in ``dropped``) when the buffer is full.
    @discardableResult
    @inlinable
    public func submit(_ entry: Entry) -> Bool {
        let accepted = pending.withLock { entries in
            guard entries.count < capacity else { return false }
            entries.append(entry)
            return true
        }
        if !accepted { droppedCount.add(1, ordering: .relaxed) }
        return accepted
    }

    /// Entries dropped because the buffer was full, since start.
    package var dropped: Int { droppedCount.load(ordering: .relaxed) }

    /// Waits (at most `timeout`) until everything submitted before the call has been written: for
    /// a line that must precede something else (the start-up messages before the listening line).
    package func flush(timeout: Duration = .seconds(2)) {
        let target = passes.load(ordering: .acquiring) + 2  // the pass under way may have swapped before the submit
        let deadline = ContinuousClock.now + timeout
        while passes.load(ordering: .acquiring) < target, !stopping.load(ordering: .relaxed),
            ContinuousClock.now < deadline
        {
            usleep(1_000)
        }
    }

    /// Writes what is buffered and stops the writer; later submits are kept but never written.
    /// Safe to call more than once.
    package func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopped.wait()
    }

    private func run() {
        var spare: [Entry] = []
        spare.reserveCapacity(capacity)
        var bytes: [UInt8] = []
        while true {
            let last = stopping.load(ordering: .acquiring)
            pending.withLock { swap(&$0, &spare) }
            if !spare.isEmpty {
                bytes.removeAll(keepingCapacity: true)
                format(spare, &bytes)
                spare.removeAll(keepingCapacity: true)
                Self.writeAll(bytes, to: descriptor)
            }
            tick?()
            passes.add(1, ordering: .releasing)
            if last { break }
            let (seconds, attoseconds) = interval.components
            usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        }
        stopped.signal()
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }  // stderr closed or broken: the lines are lost, the server goes on
                offset += written
            }
        }
    }
}
