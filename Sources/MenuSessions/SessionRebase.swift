import MenuModel
import Synchronization

/// What every store keeps per session about its expansion: the state, the epoch of the menu
/// the state's positions belong to (see ``MenuGeneration``), and the revision
/// (``SessionSnapshot``), which a carry-over to a newer menu leaves as it is.
package protocol SessionStateEntry: SessionTableEntry {
    var state: SessionState { get set }
    var epoch: MenuEpoch { get set }
    /// The revision and the last splices; its ``ChangeHistory/endRevision`` is the revision.
    var history: ChangeHistory { get set }
    /// True when a carry-over to a newer menu is a write of the session (a ``ReloadMark`` entry,
    /// one revision per menu); false when it keeps the revision and forgets the entries.
    static var carryRecordsReload: Bool { get }
}

/// How a stored session stands against the menu a request serves.
package enum SessionFreshness: Sendable {
    /// The state belongs to the request's menu.
    case current
    /// The state belongs to an older menu: carry it over first (outside the shard lock).
    case stale(SessionState, MenuEpoch)
    /// The session was already carried to a newer menu than the request's: the request must
    /// start again on the current menu (``SessionStoreError/menuChanged``).
    case newer
}

extension SessionStateEntry {
    /// The session's revision (``SessionSnapshot``).
    package var revision: Int { history.endRevision }

    /// The state's and the history's heap bytes.
    package var heapBytes: Int { state.heapBytes + history.heapBytes }

    /// Installs `state`, carried over to `epoch`'s menu, a newer one. With
    /// ``carryRecordsReload``, one revision per reload crossed: past one, a ``ReloadMark`` entry
    /// (kept at most `historyCapacity` entries); past more, the entries are gone. Otherwise the
    /// revision stays and the entries are forgotten.
    package mutating func carry(_ state: SessionState, to epoch: MenuEpoch, historyCapacity: Int) {
        if epoch !== self.epoch {
            if !Self.carryRecordsReload {
                history.clear()
            } else if epoch.number == self.epoch.number + 1 {
                history.recordReload(ReloadMark(to: epoch, state: self.state), capacity: historyCapacity)
            } else {
                history.skipReloads(epoch.number - self.epoch.number)
            }
        }
        self.state = state
        self.epoch = epoch
    }

    /// The state and revision, as a read answers them.
    package var snapshot: SessionSnapshot { SessionSnapshot(state: state, revision: revision) }

    /// Refuses a write `condition` does not admit at this entry's revision.
    package func check(_ condition: RevisionCondition?) throws(SessionStoreError) {
        if let condition, !condition.admits(revision) { throw .revisionMismatch(current: revision) }
    }

    /// The session's state by id (base, marks, flipped groups), read on `latest` (the newest menu,
    /// carried over to it when the session is older): what a store writes out. O(k · (depth + log k)).
    package func portable(latest: MenuGeneration) -> PortableState {
        state.rebased(from: epoch, to: latest).portable(in: latest.menu)
    }

    package func freshness(for generation: MenuGeneration) -> SessionFreshness {
        if epoch === generation.epoch { return .current }
        return epoch.number < generation.epoch.number ? .stale(state, epoch) : .newer
    }
}

/// The outcome of ``SessionTable/rebaseAll(to:)``.
package struct SessionRebaseReport: Sendable, Equatable {
    /// Sessions carried over to the new menu by this pass (others were carried by their own requests).
    package var rebased = 0
    /// Sessions the pass could not carry over now (a durable write in flight): a later pass must.
    package var remaining = 0
    /// True when a newer menu arrived during the pass: the newer one's pass takes over.
    package var superseded = false

    package init() {}
}

/// How a store whose sessions can be pinned (``SessionTableEntry/isPinned``: the durable store's
/// write in flight) waits for a pin to clear. A pinned session is never carried over to a newer
/// menu: its write was computed on the older one and replaces the state when it settles, so a
/// carry-over under it would be lost, and the reload's revision with it.
package protocol PinnedWriteSettlement: AnyObject, Sendable {
    /// A count of the pinned writes settled so far; take it before looking at the session.
    var settlementMark: UInt64 { get }
    /// Waits until a write settles after `mark` (`.unavailable` past the store's timeout).
    func waitForSettlement(after mark: UInt64) throws(SessionStoreError)
}

/// The reload logic both stores share. A rebase never runs under a shard lock: the stale state is
/// copied out under the lock (O(1), copy-on-write), carried over outside it, and installed under
/// the lock again only when the session still holds exactly that state at that epoch and is not
/// pinned (a write in between wins, and the next use starts over). So a request waits for at most
/// its own session's rebase, or its own session's write in flight, and the background pass holds
/// each shard's lock only to list and to install.
extension SessionTable where Entry: SessionStateEntry {
    /// Runs `body` on `id`'s live entry once its state belongs to `generation`, carrying the
    /// session over first when it is older (after its write in flight settles: `settlement`,
    /// which a store whose entries are never pinned leaves nil). Under the shard lock
    /// (``withShardForWrite(of:now:_:)`` when `forWrite`: the write's expiry sweep follows).
    /// `.unknownSession` for no live session, `.menuChanged` when the session is already on a
    /// newer menu than `generation`.
    package func withEntry<Result: Sendable>(
        of id: SessionID, in generation: MenuGeneration, now: SessionTime, forWrite: Bool,
        settlement: (any PinnedWriteSettlement)? = nil,
        _ body: (inout SessionShard<Entry>, SessionShard<Entry>.Position) throws(SessionStoreError) -> Result
    ) throws(SessionStoreError) -> Result {
        let timeToLive = timeToLive
        // Taken only once a pinned stale session was seen, then the session is looked at again:
        // a settlement between the two looks is not missed, and the common path takes no mark.
        var mark: UInt64?
        while true {
            // A local function, not a closure in a `let`: that one's context was allocated on the
            // heap for every read and write.
            func step(_ shard: inout SessionShard<Entry>) throws(SessionStoreError) -> RebaseStep<Result> {
                guard let position = shard.use(id, now: now, timeToLive: timeToLive) else { throw .unknownSession }
                switch shard.reading(at: position, { $0.freshness(for: generation) }) {
                case .current: return .done(try body(&shard, position))
                case .stale(let state, let epoch):
                    return shard.reading(at: position, \.isPinned) ? .pinned : .stale(state, epoch)
                case .newer: throw .menuChanged
                }
            }
            let outcome = forWrite ? try withShardForWrite(of: id, now: now, step) : try withShard(of: id, step)
            switch outcome {
            case .done(let result): return result
            case .stale(let state, let epoch):
                mark = nil
                rebase(id, state, from: epoch, to: generation)
            case .pinned:
                guard let settlement else { preconditionFailure("a pinned session needs a store that settles pins") }
                if let seen = mark {
                    mark = nil
                    try settlement.waitForSettlement(after: seen)
                } else {
                    mark = settlement.settlementMark
                }
            }
        }
    }

    /// Carries `state` (the session's at `epoch`) over to `generation` outside any lock, then
    /// installs it if the session still holds that state at that epoch and has no write in
    /// flight. O(k · (depth + log k)).
    package func rebase(_ id: SessionID, _ state: SessionState, from epoch: MenuEpoch, to generation: MenuGeneration) {
        let rebased = state.rebased(from: epoch, to: generation)
        withShard(of: id) { shard in
            _ = shard.install(
                rebased, for: id, replacing: state, at: epoch, to: generation.epoch, historyCapacity: historyCapacity)
        }
    }

    /// Carries every session older than `generation` over to it, shard by shard: each shard's
    /// stale sessions are listed under its lock (O(sessions in the shard)), carried over outside
    /// it, and installed in batches of ``rebaseBatch`` per lock. Pinned sessions (a write in
    /// flight) are left for a later pass and counted in `remaining`. Stops early when a session
    /// newer than `generation` shows that a later reload took over.
    package func rebaseAll(to generation: MenuGeneration) -> SessionRebaseReport {
        var report = SessionRebaseReport()
        for index in 0 ..< Self.shardCount {
            let (stale, pinned, newer) = withShard(at: index) { shard in
                var stale: [(SessionID, SessionState, MenuEpoch)] = []
                var pinned = 0
                var newer = false
                shard.forEach { id, entry in
                    switch entry.freshness(for: generation) {
                    case .current: break
                    case .newer: newer = true
                    case .stale(let state, let epoch):
                        if entry.isPinned { pinned += 1 } else { stale.append((id, state, epoch)) }
                    }
                }
                return (stale, pinned, newer)
            }
            report.remaining += pinned
            if newer {
                report.superseded = true
                return report
            }
            var start = 0
            while start < stale.count {
                let batch = stale[start ..< min(start + Self.rebaseBatch, stale.count)]
                let rebased = batch.map { $0.1.rebased(from: $0.2, to: generation) }
                let installed = withShard(at: index) { shard in
                    var installed = 0
                    for ((id, state, epoch), new) in zip(batch, rebased)
                    where shard.install(
                        new, for: id, replacing: state, at: epoch, to: generation.epoch,
                        historyCapacity: historyCapacity)
                    {
                        installed += 1
                    }
                    return installed
                }
                report.rebased += installed
                start += Self.rebaseBatch
            }
        }
        return report
    }

    /// The changes of `id` since revision `since`, read on `generation` (carried over first, which
    /// is a reload entry or forgets the older menu's entries: ``SessionStateEntry/carry``). Under
    /// the shard lock: O(entries answered); a reload entry's splices are computed by the caller.
    package func changes(
        of id: SessionID, since: Int, in generation: MenuGeneration,
        now: SessionTime, settlement: (any PinnedWriteSettlement)? = nil
    ) throws(SessionStoreError) -> SessionChanges {
        try withEntry(of: id, in: generation, now: now, forWrite: false, settlement: settlement) { shard, position in
            let history = shard[position].history
            return SessionChanges(revision: history.endRevision, entries: history.entries(since: since))
        }
    }

    /// Sessions one lock of the background pass installs at most.
    package static var rebaseBatch: Int { 64 }
}

extension SessionShard where Entry: SessionStateEntry {
    /// Installs `rebased` (carried from `epoch` to `next`) in `id`'s entry, in place, when the
    /// session still holds exactly `state` at `epoch` (a write in between wins) and has no write
    /// in flight; true when installed. The check both rebases share.
    mutating func install(
        _ rebased: SessionState, for id: SessionID, replacing state: SessionState, at epoch: MenuEpoch,
        to next: MenuEpoch, historyCapacity: Int
    ) -> Bool {
        guard let position = position(of: id) else { return false }
        return withEntry(at: position) { entry in
            guard entry.epoch === epoch, entry.state == state, !entry.isPinned else { return false }
            entry.carry(rebased, to: next, historyCapacity: historyCapacity)
            return true
        }
    }
}

private enum RebaseStep<Result: Sendable>: Sendable {
    case done(Result)
    case stale(SessionState, MenuEpoch)
    /// Stale, but a write of the session is in flight: wait for it first.
    case pinned
}

/// The newest menu a store has been handed, which the store's own work (compaction, a session
/// created without a request's menu) uses. Monotone: a call naming an older generation changes
/// nothing. A request's generation is noted before any session is written with it, so no stored
/// session is ever newer than ``current``.
package final class LatestMenu: Sendable {
    private let generation: Mutex<MenuGeneration>
    private let number: Atomic<Int>

    package init(_ generation: MenuGeneration) {
        self.generation = Mutex(generation)
        number = Atomic(generation.epoch.number)
    }

    package var current: MenuGeneration { generation.withLock { $0 } }

    /// Makes `candidate` the newest when it is newer. One relaxed atomic load when it is not.
    package func note(_ candidate: MenuGeneration) {
        guard candidate.epoch.number > number.load(ordering: .acquiring) else { return }
        generation.withLock { latest in
            guard candidate.epoch.number > latest.epoch.number else { return }
            latest = candidate
            number.store(candidate.epoch.number, ordering: .releasing)
        }
    }
}
