import Foundation
import MenuSessions
import Synchronization

/// The one thread that writes the session journal, so that no HTTP thread ever waits for the
/// disk while it holds a session shard lock.
///
/// A write is queued with a `settle` closure; the writer thread takes everything queued as one
/// batch, appends it (one write(2)), with ``FsyncPolicy/always`` flushes it (one fdatasync for
/// the whole batch: group commit), then calls each `settle` with the batch's fate, and only then
/// wakes the waiting callers. A caller waits at most the store timeout.
///
/// Invariants:
/// - A change reaches memory only through `settle(.durable)`, which runs after its record is
///   durable (written, and flushed under `always`) and before its caller returns: memory never
///   shows a change the journal could lose, and a reply of 200 means the change is in both.
/// - When the caller's deadline passes before the batch is durable, the caller answers
///   `.unavailable` and the write is *abandoned*: it is never applied. If its record reaches the
///   file anyway, `settle(.abandoned)` queues a compensating record (the session's state before
///   it), so a restart shows what memory showed. The decision, applied or abandoned, is taken
///   once under `condition`, so a caller and the writer never disagree about it.
/// - Records are written in queue order. A session has at most one write in flight (its
///   `pending` mark, set by the store under the shard lock and cleared by `settle`), and a
///   compensation is queued before that mark clears, so a session's records are in its order.
/// - While the disk has not finished a batch that a caller gave up on (`stalled`), new writes
///   are refused at once rather than each holding an HTTP thread for the whole timeout; the
///   first batch that completes clears it. Touch records never wait and are dropped when
///   more than ``maxQueuedBytes`` wait; compensations are never dropped.
/// - ``commitLock`` is held from a batch's write until its `settle` calls have run, so compaction,
///   which starts a journal generation under it, never sees a record in the old generation
///   that memory does not show yet.
/// - Lock order: a shard lock, then `condition`; `commitLock`, then a shard lock or `condition`
///   or the journal's locks. `condition` is never held while a shard lock is taken.
///
/// Cost per write: one queue append and one wake-up of the writer thread; per batch, one
/// write(2) (and one fdatasync under `always`) whatever its size.
final class DurableJournalWriter: @unchecked Sendable {
    /// What became of a queued write, told to its `settle` closure.
    enum Fate: Sendable {
        /// The record is durable: apply the change to memory.
        case durable
        /// The record is not in the journal (the write failed or was refused): drop the change.
        case refused
        /// The caller gave up before the record was durable, but it is in the journal now:
        /// queue a record that undoes it, and drop the change.
        case abandoned
    }

    typealias Settle = @Sendable (Fate) -> Void

    let journal: DurableJournal
    let timeout: Duration
    /// Queued bytes beyond which touch records are dropped (writes have the timeout as bound).
    static var maxQueuedBytes: Int { 4 << 20 }
    let commitLock = Mutex<Void>(())
    private let log: @Sendable (String) -> Void
    private let condition = NSCondition()
    /// Guarded by `condition` (hence `@unchecked Sendable`).
    private var state = State()

    private struct Item {
        var bytes: [UInt8]
        /// 0 for records nobody waits for (touches, compensations).
        var ticket: UInt64
        var settle: Settle?
    }

    private enum Stage {
        case queued
        /// Durable, its `settle` running; the caller can no longer give up.
        case committing
        case done(Result<Int64, SessionStoreError>)
        case abandoned
    }

    private struct State {
        var queue: [Item] = []
        var queuedBytes = 0
        var nextTicket: UInt64 = 1
        var stages: [UInt64: Stage] = [:]
        /// Bumped after every `settle`: what a caller waiting for a session's pending mark watches.
        var settlements: UInt64 = 0
        var stalled = false
        var stopping = false
        var running = true
    }

    init(journal: DurableJournal, timeout: Duration, log: @escaping @Sendable (String) -> Void) {
        self.journal = journal
        self.timeout = timeout
        self.log = log
        let thread = Thread { [self] in run() }
        thread.name = "menu-server journal writer"
        thread.start()
    }

    /// The time by which a write started now must be durable.
    func deadline() -> Date { Date(timeIntervalSinceNow: Double(timeout / .milliseconds(1)) / 1000) }

    private var timeoutText: String {
        let milliseconds = Int64((timeout / .milliseconds(1)).rounded())
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }

    // MARK: Callers

    /// Queues `bytes` (whole records) and waits until `settle` has run with the fate of the
    /// write; returns the journal's size after it. Throws `.unavailable` when the write was
    /// refused or not durable by `deadline` (then `settle` gets `.refused` or, later, `.abandoned`).
    func commit(_ bytes: [UInt8], deadline: Date, settle: @escaping Settle) throws(SessionStoreError) -> Int64 {
        if let refusal = journal.refusal { return try refuse(.unavailable(reason: refusal), settle) }
        condition.lock()
        if let refusal = refusalLocked() {
            condition.unlock()
            return try refuse(refusal, settle)
        }
        let ticket = state.nextTicket
        state.nextTicket += 1
        state.stages[ticket] = .queued
        enqueueLocked(Item(bytes: bytes, ticket: ticket, settle: settle))
        defer { condition.unlock() }
        while true {
            switch state.stages[ticket] {
            case .done(let result)?:
                state.stages[ticket] = nil
                return try result.get()
            case .queued?:
                if Date() < deadline {
                    _ = condition.wait(until: deadline)
                    continue
                }
                state.stages[ticket] = .abandoned
                let first = !state.stalled
                state.stalled = true
                if first {
                    log(
                        "session journal: the disk did not finish a write within \(timeoutText); writes answer 503 until it does"
                    )
                }
                throw .unavailable(reason: "the disk did not confirm the change within \(timeoutText)")
            case .committing?, .abandoned?, nil:
                condition.wait()
            }
        }
    }

    /// Queues records nobody waits for: a touch (dropped when the queue is long or the journal
    /// refuses writes) or a compensation (`essential`, never dropped).
    func enqueue(_ bytes: [UInt8], essential: Bool = false) {
        condition.lock()
        defer { condition.unlock() }
        guard essential || (state.queuedBytes < Self.maxQueuedBytes && !state.stopping) else { return }
        enqueueLocked(Item(bytes: bytes, ticket: 0, settle: nil))
    }

    /// A mark to pass to ``waitForSettlement(after:deadline:)``; take it before looking at a
    /// session's pending mark.
    var settlementMark: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return state.settlements
    }

    /// Waits until some write settled after `mark` (a session's pending mark may be gone);
    /// throws `.unavailable` at `deadline`, or at once while the disk is stalled.
    func waitForSettlement(after mark: UInt64, deadline: Date) throws(SessionStoreError) {
        condition.lock()
        defer { condition.unlock() }
        while state.settlements == mark {
            if let refusal = refusalLocked() { throw refusal }
            guard Date() < deadline else {
                throw .unavailable(reason: "an earlier change of this session was not confirmed within \(timeoutText)")
            }
            _ = condition.wait(until: deadline)
        }
    }

    private func refusalLocked() -> SessionStoreError? {
        if state.stopping { return .unavailable(reason: "the server is shutting down") }
        if state.stalled {
            return .unavailable(reason: "the disk has not finished an earlier write within \(timeoutText)")
        }
        return nil
    }

    private func refuse(_ error: SessionStoreError, _ settle: Settle) throws(SessionStoreError) -> Int64 {
        settle(.refused)
        condition.lock()
        state.settlements += 1
        condition.broadcast()
        condition.unlock()
        throw error
    }

    private func enqueueLocked(_ item: Item) {
        state.queue.append(item)
        state.queuedBytes += item.bytes.count
        condition.broadcast()
    }

    // MARK: The writer thread

    private func run() {
        while let batch = nextBatch() {
            var committed: [UInt64] = []
            let result: Result<Int64, SessionStoreError> = commitLock.withLock { _ in
                let result = write(batch)
                condition.lock()
                var fates: [(Settle, Fate)] = []
                for item in batch {
                    var abandoned = false
                    if item.ticket != 0 {
                        if case .abandoned? = state.stages[item.ticket] {
                            abandoned = true
                            state.stages[item.ticket] = nil
                        } else {
                            state.stages[item.ticket] = .committing
                            committed.append(item.ticket)
                        }
                    }
                    guard let settle = item.settle else { continue }
                    switch result {
                    case .success: fates.append((settle, abandoned ? .abandoned : .durable))
                    case .failure: fates.append((settle, .refused))
                    }
                }
                condition.unlock()
                for (settle, fate) in fates { settle(fate) }
                return result
            }
            condition.lock()
            for ticket in committed { state.stages[ticket] = .done(result) }
            state.settlements += 1
            let recovered = state.stalled
            state.stalled = false
            condition.broadcast()
            condition.unlock()
            if recovered { log("session journal: the disk finished the stalled write; writes are accepted again") }
        }
        condition.lock()
        state.running = false
        condition.broadcast()
        condition.unlock()
    }

    /// Everything queued, once there is something; nil once stopping and drained.
    private func nextBatch() -> [Item]? {
        condition.lock()
        defer { condition.unlock() }
        while state.queue.isEmpty {
            if state.stopping { return nil }
            condition.wait()
        }
        let batch = state.queue
        state.queue = []
        state.queuedBytes = 0
        return batch
    }

    private func write(_ batch: [Item]) -> Result<Int64, SessionStoreError> {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(batch.reduce(0) { $0 + $1.bytes.count })
        for item in batch { bytes += item.bytes }
        do throws(SessionStoreError) {
            let receipt = try journal.append(bytes)
            if journal.policy == .always { try journal.waitUntilDurable(receipt.position) }
            return .success(receipt.journalBytes)
        } catch {
            return .failure(error)
        }
    }

    // MARK: Shutdown

    /// Refuses new writes, lets the writer finish what is queued and stop; returns once it has.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        state.stopping = true
        condition.broadcast()
        while state.running { condition.wait() }
    }
}

extension DurableJournalWriter: PinnedWriteSettlement {
    /// Waits, at most the store timeout, for a write settled after `mark`.
    func waitForSettlement(after mark: UInt64) throws(SessionStoreError) {
        try waitForSettlement(after: mark, deadline: deadline())
    }
}
