import MenuModel
import MenuSessions
import Synchronization

/// A session store that forwards every call to the durable store it wraps and counts, for
/// metrics, the writes that waited for the journal, how long they waited, and the calls refused
/// as unavailable. Kept outside the store so the store's code does not change for metrics.
///
/// Invariant: it answers exactly as `base` (same values, same errors); the counts only grow.
/// Cost: a read is one more dynamic call; a write two clock readings and two relaxed adds
/// beside the disk wait it measures.
package final class MeasuredSessionStore: PipelinedSessionStore {
    package let base: any SessionStore
    /// `base` when it can start writes without waiting (``PipelinedSessionStore``).
    private let pipelinedBase: (any PipelinedSessionStore)?
    private let writes = Atomic<Int>(0)
    private let waitNanoseconds = Atomic<Int>(0)
    private let unavailable = Atomic<Int>(0)

    package init(_ base: any SessionStore) {
        self.base = base
        pipelinedBase = base as? any PipelinedSessionStore
    }

    /// The counts at one moment.
    package struct Figures: Sendable, Equatable {
        package var durableWrites = 0
        package var durableWaitNanoseconds = 0
        package var unavailable = 0
    }

    package var figures: Figures {
        Figures(
            durableWrites: writes.load(ordering: .relaxed),
            durableWaitNanoseconds: waitNanoseconds.load(ordering: .relaxed),
            unavailable: unavailable.load(ordering: .relaxed))
    }

    package var currentMenu: MenuGeneration { base.currentMenu }

    package func create(in menu: MenuGeneration, state: SessionState) throws(SessionStoreError) -> SessionID {
        try timedWrite { () throws(SessionStoreError) in try base.create(in: menu, state: state) }
    }

    package func delete(_ id: SessionID) throws(SessionStoreError) {
        try timedWrite { () throws(SessionStoreError) in try base.delete(id) }
    }

    package func snapshot(of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> SessionSnapshot {
        try counted { () throws(SessionStoreError) in try base.snapshot(of: id, in: menu) }
    }

    package func snapshot(of id: SessionID, in menu: MenuGeneration, atLeast revision: Int) throws(SessionStoreError)
        -> SessionSnapshot
    {
        try counted { () throws(SessionStoreError) in try base.snapshot(of: id, in: menu, atLeast: revision) }
    }

    package var refreshesCopies: Bool { base.refreshesCopies }
    package var recordsReloads: Bool { base.recordsReloads }

    package func observeOtherWriters(_ observer: @escaping @Sendable (OtherWriterNews) -> Void) {
        base.observeOtherWriters(observer)
    }

    package func readinessProblem() -> String? { base.readinessProblem() }

    package func apply(
        _ command: SessionCommand, to id: SessionID?, in menu: MenuGeneration,
        if condition: RevisionCondition?
    ) throws(SessionStoreError) -> AppliedChange {
        try timedWrite { () throws(SessionStoreError) in try base.apply(command, to: id, in: menu, if: condition) }
    }

    package func changes(of id: SessionID, since: Int, in menu: MenuGeneration) throws(SessionStoreError)
        -> SessionChanges
    {
        try counted { () throws(SessionStoreError) in try base.changes(of: id, since: since, in: menu) }
    }

    /// Forwards to `base` when it pipelines writes (false otherwise), timed and counted as
    /// ``apply(_:to:in:if:)`` is once the completion reports.
    package func startApply(
        _ command: SessionCommand, to id: SessionID, in menu: MenuGeneration, if condition: RevisionCondition?,
        then completion: @escaping @Sendable (PipelinedWrite) -> Void
    ) -> Bool {
        guard let pipelinedBase else { return false }
        let started = monotonicNanoseconds()
        return pipelinedBase.startApply(command, to: id, in: menu, if: condition) { [self] write in
            switch write {
            case .applied: note(since: started)
            case .failed(.unavailable):
                unavailable.add(1, ordering: .relaxed)
                note(since: started)
            case .failed, .notWritten: break  // refused, or decided again (and counted) by `apply`
            }
            completion(write)
        }
    }

    @discardableResult
    package func adopt(_ menu: MenuGeneration) -> SessionRebaseReport { base.adopt(menu) }

    /// `body`, a write: timed and counted when it reached the journal (accepted, or refused as unavailable).
    private func timedWrite<Result>(_ body: () throws(SessionStoreError) -> Result) throws(SessionStoreError) -> Result
    {
        let started = monotonicNanoseconds()
        do {
            let result = try counted(body)
            note(since: started)
            return result
        } catch .unavailable(let reason) {
            note(since: started)
            throw .unavailable(reason: reason)
        }
    }

    private func note(since started: Int) {
        writes.add(1, ordering: .relaxed)
        waitNanoseconds.add(monotonicNanoseconds() - started, ordering: .relaxed)
    }

    /// `body`, an `.unavailable` refusal counted.
    private func counted<Result>(_ body: () throws(SessionStoreError) -> Result) throws(SessionStoreError) -> Result {
        do {
            return try body()
        } catch .unavailable(let reason) {
            unavailable.add(1, ordering: .relaxed)
            throw .unavailable(reason: reason)
        }
    }
}
