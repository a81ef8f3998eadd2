import Dispatch
import Foundation
import MenuModel
import MenuSessions
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``SessionStore`` that keeps sessions on disk in a data directory: an append-only journal
/// of resolved changes plus, from time to time, a snapshot of all live sessions, so sessions
/// survive restarts and crashes.
///
/// Sessions live in memory exactly as in ``InMemorySessionStore`` (same shards, time to live,
/// session limit, eviction and command semantics, which it reuses); every change is also
/// journaled, and so is every eviction (as a deletion, so a restart does not bring it back).
///
/// Invariants:
/// - Write first, then apply: a change goes to the ``DurableJournalWriter`` thread and reaches
///   memory only once its record is written (with ``FsyncPolicy/always``: flushed), so no reader
///   ever sees a change the journal could lose. No shard lock is held while the disk works: the
///   lock covers only the in-memory check and change, so a stalled disk never blocks a read.
/// - A write the disk does not take within ``storeTimeout`` answers `.unavailable` and is not
///   applied (in memory now, nor after a restart: a record that reached the file anyway is
///   undone by a compensating one). A failed write or flush refuses the change the same way.
/// - One session's writes are linearizable: a session has at most one write in flight (its
///   `pending` mark); a second one waits for it, within its own deadline.
/// - The journal holds resolved states by group id (`set g true`, never "toggle" or a
///   position): replaying a record twice is harmless and a changed menu replays safely. A bulk
///   command (expand or collapse all, a recursive set) and a session created holding a state are
///   journaled as the whole resulting state by id (base, marks, flips: ``DurableRecord/Kind/state``),
///   its size that of the state, never that of the groups it affected.
/// - Every change not in the snapshot is in a journal of the snapshot's generation or later:
///   compaction starts a new journal generation before it reads any shard.
/// - The files stay bounded by the live state: compaction runs once the journals since the
///   snapshot exceed max(`compactionMinimumBytes`, 2 × snapshot size).
/// - A reload is a revision of every session (a ``ReloadMark`` entry in its feed), journaled once
///   for all: the reload's record is in the journal before any session is carried over to its
///   menu, and every record says the reload count of the menu it was computed on, so replay
///   restores the revisions memory showed (``DurableRecord/Event``). A session with a write in
///   flight is carried over only once the write settles, so the two never claim one revision.
///
/// Start-up replays the snapshot, then the journals: O(snapshot + journal) = O(live state)
/// record decoding, plus O(k · (depth + log k)) to rebuild a session's state of k entries
/// (``SessionState/init(portable:in:ignoredIDs:)``).
package final class DurableSessionStore: SessionStore {
    package let timeToLive: Duration
    /// ``timeToLive`` in whole milliseconds, what the checks compare with.
    var timeToLiveMilliseconds: Int64 { table.timeToLive }
    /// Groups one session may hold changed from the menu's default at most.
    package let maxChangedGroups: Int
    /// Splices each session keeps for ``changes(of:since:in:)`` (in memory only).
    package let changeHistory: Int
    /// Bytes one session's state may hold (``SessionLimits/maxStateBytes``).
    package let maxStateBytes: Int
    package let directory: String
    package let fsyncPolicy: FsyncPolicy
    /// How long a write may wait for the disk before it answers `.unavailable`.
    package let storeTimeout: Duration
    /// Journals may grow to max(this, 2 × snapshot size) before a compaction.
    package let compactionMinimumBytes: Int64
    /// What start-up found and repaired.
    package let recovery: DurableRecoveryReport

    let table: SessionTable<Entry>
    let latest: LatestMenu
    let journal: DurableJournal
    let writer: DurableJournalWriter
    let clock: @Sendable () -> SessionTime
    let wallClock: @Sendable () -> Int64
    let log: @Sendable (String) -> Void
    /// The data directory's `LOCK` file, flock'ed while the store is open; dropped by ``close()``.
    private let directoryLock: Mutex<DurableFile?>
    let compaction = DispatchQueue(label: "menu-server compaction")
    let compactionScheduled = Atomic<Bool>(false)
    /// Wall-clock milliseconds before which no compaction is retried (after a failed one).
    let compactionRetryAfter = Atomic<Int64>(0)
    let snapshotBytes: Atomic<Int64>
    let closed = Atomic<Bool>(false)
    /// The reloads the files recorded at start-up: the reload count of epoch 1's menu.
    let reloadsAtStart: Int
    /// The newest epoch number whose reload is in the journal (1: the start-up menu needs none);
    /// the mutex orders the reload records, the atomic is the lock-free check every call makes.
    private let journaledEpoch = Mutex<Int>(1)
    private let journaledEpochNumber = Atomic<Int>(1)

    struct Entry: SessionStateEntry {
        var state: SessionState
        var epoch: MenuEpoch
        /// The revision and the last splices (the splices are not journaled: empty after a restart).
        var history = ChangeHistory(revision: 0)
        var lastUsed: SessionTime
        /// The latest use the journal knows of (each record carries its time).
        var journaledUse: SessionTime
        /// A write of this session is in the journal writer's hands; its `settle` clears this.
        /// Later writes of the session wait for it; reads see the state before it.
        var pending = false

        /// Neither expiry nor eviction may remove a session whose write is pending.
        var isPinned: Bool { pending }

        /// A reload is a revision with a feed entry, as in memory: the journal's reload records
        /// restore the revision at a restart, and a pinned session is not carried over.
        static var carryRecordsReload: Bool { true }
    }

    /// Opens (or starts) the store in `directory`, which must exist and be writable: takes the
    /// directory's lock, replays snapshot and journal, repairs a damaged tail (reported through
    /// `log`), and drops sessions idle longer than `timeToLive`.
    package convenience init(
        directory: String, menu: Menu, fsync: FsyncPolicy = .everysec,
        maxSessions: Int = SessionLimits.defaults.maxSessions,
        timeToLive: Duration = SessionLimits.defaults.timeToLive,
        evictionIdle: Duration = SessionLimits.defaults.evictionIdle,
        maxChangedGroups: Int = SessionLimits.defaults.maxChangedGroups,
        sessionMemory: Int = SessionLimits.defaults.sessionMemory,
        compactionMinimumBytes: Int64 = 4 << 20,
        storeTimeout: Duration = .seconds(2),
        log: @escaping @Sendable (String) -> Void = { _ in },
        clock: @escaping @Sendable () -> SessionTime = SessionClock.now,
        wallClock: @escaping @Sendable () -> Int64 = DurableSessionStore.milliseconds
    ) throws(DurableStoreError) {
        try self.init(
            directory: directory, menu: MenuGeneration(menu), fsync: fsync,
            limits: SessionLimits(
                maxSessions: maxSessions, timeToLive: timeToLive, evictionIdle: evictionIdle,
                maxChangedGroups: maxChangedGroups, sessionMemory: sessionMemory),
            compactionMinimumBytes: compactionMinimumBytes, storeTimeout: storeTimeout,
            log: log, clock: clock, wallClock: wallClock)
    }

    /// Opens (or starts) the store in `directory` for sessions on `menu` (see the other initialiser).
    package convenience init(
        directory: String, menu: MenuGeneration, fsync: FsyncPolicy = .everysec, limits: SessionLimits = .defaults,
        compactionMinimumBytes: Int64 = 4 << 20, storeTimeout: Duration = .seconds(2),
        log: @escaping @Sendable (String) -> Void = { _ in },
        clock: @escaping @Sendable () -> SessionTime = SessionClock.now,
        wallClock: @escaping @Sendable () -> Int64 = DurableSessionStore.milliseconds
    ) throws(DurableStoreError) {
        let timeToLive = limits.timeToLive
        let recovered = try DurableRecovery.run(
            directory: directory, menu: menu, timeToLive: timeToLive,
            now: (clock(), wallClock()), log: log)
        self.init(
            directory: directory, menu: menu, fsync: fsync, limits: limits,
            compactionMinimumBytes: compactionMinimumBytes,
            storeTimeout: storeTimeout, recovered: recovered,
            log: log, clock: clock, wallClock: wallClock)
        if recovered.needsCompaction {
            do {
                try compactNow()
            } catch {
                close()
                throw DurableStoreError(directory: directory, "cannot write a fresh snapshot: \(error)")
            }
        } else {
            scheduleCompactionIfNeeded(journalBytes: recovered.journalBytes)
        }
    }

    private init(
        directory: String, menu: MenuGeneration, fsync: FsyncPolicy, limits: SessionLimits,
        compactionMinimumBytes: Int64,
        storeTimeout: Duration,
        recovered: DurableRecovery.Result,
        log: @escaping @Sendable (String) -> Void, clock: @escaping @Sendable () -> SessionTime,
        wallClock: @escaping @Sendable () -> Int64
    ) {
        latest = LatestMenu(menu)
        timeToLive = limits.timeToLive
        maxChangedGroups = limits.maxChangedGroups
        changeHistory = limits.changeHistory
        maxStateBytes = limits.maxStateBytes
        self.directory = directory
        fsyncPolicy = fsync
        self.compactionMinimumBytes = compactionMinimumBytes
        self.storeTimeout = storeTimeout
        self.log = log
        self.clock = clock
        self.wallClock = wallClock
        recovery = recovered.report
        reloadsAtStart = recovered.reloads
        directoryLock = Mutex(recovered.lock)
        snapshotBytes = Atomic(recovered.snapshotBytes)
        table = SessionTable(
            maxSessions: limits.maxSessions, timeToLive: SessionClock.milliseconds(of: limits.timeToLive),
            evictionIdle: SessionClock.milliseconds(of: limits.evictionIdle), memoryBudget: limits.sessionMemory,
            historyCapacity: limits.changeHistory, contents: recovered.shards)
        journal = DurableJournal(
            directory: directory, file: recovered.journalFile, generation: recovered.generation,
            fileBytes: recovered.journalFileBytes,
            olderBytes: recovered.journalBytes - recovered.journalFileBytes,
            policy: fsync, log: log)
        writer = DurableJournalWriter(journal: journal, timeout: storeTimeout, log: log)
    }

    /// Wall-clock time in milliseconds since 1970: the time the files record.
    package static let milliseconds: @Sendable () -> Int64 = {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    package var maxSessions: Int { table.maxSessions }
    /// Sessions currently held (expired ones count until they are removed).
    package var count: Int { table.count }
    /// Sessions held, created, expired and evicted (``SessionCounts``).
    package var sessionCounts: SessionCounts { table.counts }
    package var currentMenu: MenuGeneration { latest.current }

    /// A session carried over to a new menu gets a reload entry (``SessionStateEntry/carryRecordsReload``).
    package var recordsReloads: Bool { true }

    /// The data directory's reload count of `epoch`'s menu: what records written on it say.
    func reloads(of epoch: MenuEpoch) -> Int { Self.reloads(of: epoch, atStart: reloadsAtStart) }

    /// ``reloads(of:)`` for the settle closures, which hold no reference to the store.
    static func reloads(of epoch: MenuEpoch, atStart: Int) -> Int { atStart + epoch.number - 1 }

    /// Makes `menu` the newest (``LatestMenu/note(_:)``), journaling its reload first when it is a
    /// newer menu than the journal knows: no session is carried over to a menu whose reload the
    /// journal could lose. One atomic load unless a reload happened; the first call after one waits
    /// for its record (`.unavailable` when the disk does not take it in time).
    private func noteMenu(_ menu: MenuGeneration) throws(SessionStoreError) {
        if menu.epoch.number > journaledEpochNumber.load(ordering: .acquiring) { try journalReload(of: menu.epoch) }
        latest.note(menu)
    }

    private func journalReload(of epoch: MenuEpoch) throws(SessionStoreError) {
        let record = Self.records([.reload(count: reloads(of: epoch))], time: wallClock())
        try journaledEpoch.withLock { (journaled: inout Int) throws(SessionStoreError) in
            guard epoch.number > journaled else { return }
            // A record the caller gave up on may still land: a reload counted twice only raises revisions.
            _ = try writer.commit(record, deadline: writer.deadline()) { _ in }
            journaled = epoch.number
            journaledEpochNumber.store(epoch.number, ordering: .releasing)
        }
    }

    /// A journal record is refreshed by a read at most this often (milliseconds), so idle times
    /// survive a restart to within 1/16 of the time to live.
    private var touchInterval: Int64 { max(timeToLiveMilliseconds / 16, 1000) }

    // MARK: SessionStore

    package func create(in menu: MenuGeneration, state: SessionState) throws(SessionStoreError) -> SessionID {
        let state = try state.checkedForNewSession(maxChangedGroups: maxChangedGroups, maxStateBytes: maxStateBytes)
        // A state other than the default: one state record (base, marks, flips) at revision 0.
        let portable = state == SessionState() ? nil : state.portable(in: menu.menu)
        let reloads = reloads(of: menu.epoch)
        return try insert(
            state, history: ChangeHistory(revision: 0), in: menu,
            events: { id in
                [.created(id, reloads: reloads)]
                    + (portable.map { DurableRecord.stateEvents(of: id, $0, revision: 0, reloads: reloads) } ?? [])
            })
    }

    /// Journals `events(id)` for a fresh id, then inserts the session holding `state` and
    /// `history` (on `menu`).
    private func insert(
        _ state: SessionState, history: ChangeHistory, in menu: MenuGeneration,
        events: (SessionID) -> [DurableRecord.Event]
    ) throws(SessionStoreError) -> SessionID {
        try noteMenu(menu)
        let now = clock()
        let entry = Entry(state: state, epoch: menu.epoch, history: history, lastUsed: now, journaledUse: now)
        try table.reserveSlot(
            now: now, bytes: SessionShard<Entry>.footprint(of: entry), beforeEvicting: journalEviction)
        let id = SessionID.random()
        let time = wallClock()
        let bytes = Self.records(events(id), time: time)
        let journalBytes: Int64
        do {
            journalBytes = try writer.commit(bytes, deadline: writer.deadline()) { [table, writer] fate in
                switch fate {
                case .durable: table.insertNew(id, entry, now: now)
                case .refused: break
                case .abandoned: writer.enqueue(Self.records([.deleted(id)], time: time), essential: true)
                }
            }
        } catch {
            table.releaseSlots()
            throw error
        }
        scheduleCompactionIfNeeded(journalBytes: journalBytes)
        return id
    }

    /// Journals an eviction as a deletion, so a restart does not bring the session back. Queued,
    /// not waited for: this runs under the victim's shard lock, which must never wait for the disk
    /// (the queue keeps it ahead of the records of the write that evicted it; if it is lost in a
    /// crash, a session idle for the eviction time comes back).
    private func journalEviction(_ victim: SessionID) {
        writer.enqueue(Self.records([.deleted(victim)], time: wallClock()), essential: true)
    }

    package func delete(_ id: SessionID) throws(SessionStoreError) {
        let deadline = writer.deadline()
        let time = wallClock()
        try markPending(id, in: nil, deadline: deadline) { _ in true }
        let journalBytes = try writer.commit(Self.records([.deleted(id)], time: time), deadline: deadline) {
            [table, writer, latest, reloadsAtStart] fate in
            table.withShard(of: id) { shard in
                guard let position = shard.position(of: id) else { return }
                switch fate {
                case .durable:
                    shard.remove(at: position)
                    return
                case .refused: break
                case .abandoned:
                    // Brings the session back as it was: created, then its whole state at its revision.
                    let reloads = Self.reloads(of: shard[position].epoch, atStart: reloadsAtStart)
                    let state = DurableRecord.stateEvents(
                        of: id, shard[position].portable(latest: latest.current),
                        revision: shard[position].revision, reloads: reloads)
                    writer.enqueue(
                        Self.records([.created(id, reloads: reloads)] + state, time: time), essential: true)
                }
                shard[position].pending = false
            }
        }
        table.releaseSlots()
        scheduleCompactionIfNeeded(journalBytes: journalBytes)
    }

    package func snapshot(of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> SessionSnapshot {
        try noteMenu(menu)
        let now = clock()
        return try table.withEntry(of: id, in: menu, now: now, forWrite: false, settlement: writer) {
            shard, position in
            shard.withEntry(at: position) { entry in
                touchIfDue(id, &entry, now: now)
                return entry.snapshot
            }
        }
    }

    package func apply(
        _ command: SessionCommand, to id: SessionID?, in menu: MenuGeneration,
        if condition: RevisionCondition?
    ) throws(SessionStoreError) -> AppliedChange {
        guard let id else {
            // A write without a session: the default view, revision 0; compute on a fresh state,
            // then journal and store it as a new session.
            if let condition, !condition.admits(0) { throw .revisionMismatch(current: 0) }
            var view = FlattenedView(menu: menu.menu)
            let outcome = try command.run(on: &view, maxChangedGroups: maxChangedGroups, maxStateBytes: maxStateBytes)
            var history = ChangeHistory(revision: 0)
            if outcome.changedState { history.record(outcome.change.historyEntry, capacity: changeHistory) }
            let state = view.state
            let reloads = reloads(of: menu.epoch)
            let newID = try insert(state, history: history, in: menu) { id in
                [.created(id, reloads: reloads)]
                    + (outcome.changedState
                        ? Self.events(of: command, outcome, state, in: menu, of: id, revision: 1, reloads: reloads)
                        : [])
            }
            return AppliedChange(
                sessionID: newID, created: true, change: outcome.change, state: state, revision: history.endRevision)
        }
        try noteMenu(menu)
        let now = clock()
        let deadline = writer.deadline()
        let limit = maxChangedGroups
        let maxStateBytes = maxStateBytes
        if command.mayGrowState {
            try table.makeRoom(forBytes: 0, now: now, excluding: id, beforeEvicting: journalEviction)
        }
        defer { table.settleBudget(now: now, excluding: id, beforeEvicting: journalEviction) }
        // Works on a copy: the session keeps its old state until the journal has the change.
        var computed: (outcome: SessionCommand.Outcome, state: SessionState, revision: Int)?
        let changed = try markPending(id, in: menu, deadline: deadline) { entry throws(SessionStoreError) -> Bool in
            try entry.check(condition)
            var view = FlattenedView(menu: menu.menu, state: entry.state)
            let outcome = try command.run(on: &view, maxChangedGroups: limit, maxStateBytes: maxStateBytes)
            computed = (outcome, view.state, entry.revision + (outcome.changedState ? 1 : 0))
            return outcome.changedState
        }
        guard let (outcome, state, revision) = computed.map({ ($0.outcome, $0.state, $0.revision) }) else {
            throw .unknownSession
        }
        let (change, groups) = (outcome.change, outcome.groupsSet)
        let applied = AppliedChange(sessionID: id, created: false, change: change, state: state, revision: revision)
        guard changed else { return applied }
        let time = wallClock()
        // One commit for every group the command set (a reveal sets several), or for the whole
        // state a bulk command leaves, at the revision the write leaves the session at.
        let record = Self.records(
            Self.events(
                of: command, outcome, state, in: menu, of: id, revision: revision, reloads: reloads(of: menu.epoch)),
            time: time)
        let changeHistory = changeHistory
        let journalBytes = try writer.commit(record, deadline: deadline) {
            [table, writer, latest, reloadsAtStart] fate in
            table.withShard(of: id) { shard in
                guard let position = shard.position(of: id) else { return }
                switch fate {
                case .durable:
                    // The session is still on the epoch the write was computed on: no carry-over
                    // lands while it is pinned.
                    shard[position].carry(state, to: menu.epoch, historyCapacity: changeHistory)
                    shard[position].history.record(change.historyEntry, capacity: changeHistory)
                    shard[position].journaledUse = now
                case .refused: break
                case .abandoned:
                    // Puts back the state before, at the revision the session stays at: a bulk
                    // command's whole state; else the command changed exactly these groups, and
                    // their state before is the opposite.
                    let revision = shard[position].revision
                    let reloads = Self.reloads(of: shard[position].epoch, atStart: reloadsAtStart)
                    let undo =
                        command.isBulk
                        ? DurableRecord.stateEvents(
                            of: id, shard[position].portable(latest: latest.current), revision: revision,
                            reloads: reloads)
                        : Self.groupSets(
                            groups.map { ($0.id, !$0.isExpanded) }, of: id, revision: revision, reloads: reloads)
                    writer.enqueue(Self.records(undo, time: time), essential: true)
                }
                shard[position].pending = false
            }
        }
        scheduleCompactionIfNeeded(journalBytes: journalBytes)
        return applied
    }

    /// Under `id`'s shard lock, records the use and runs `journals` on the live session (carried
    /// over to `menu` first when it is on an older one; `.menuChanged` when on a newer); when it
    /// returns true (the write changes something), marks the session pending: the caller then
    /// commits, and its `settle` clears the mark. While another write of the session is pending,
    /// waits for it (until `deadline`), so one session's writes apply one at a time, in order.
    /// A read does not wait for it. A session expired but not yet removed is removed here and
    /// answered as the reads answer it: `.unknownSession` (without a record: replay drops it by
    /// its times, as the sweep does).
    @discardableResult
    private func markPending(
        _ id: SessionID, in menu: MenuGeneration?, deadline: Date, _ journals: (Entry) throws(SessionStoreError) -> Bool
    ) throws(SessionStoreError) -> Bool {
        let ttl = timeToLiveMilliseconds
        while true {
            let mark = writer.settlementMark
            let now = clock()
            var removedExpired = false
            var stale: (state: SessionState, epoch: MenuEpoch)?
            let outcome: Result<Bool?, SessionStoreError> = table.withShardForWrite(of: id, now: now) { shard in
                guard let found = shard.position(of: id) else { return .failure(.unknownSession) }
                if shard[found].pending {
                    shard.markUsed(at: found, now: now)
                    return .success(nil)
                }
                guard let position = shard.use(id, now: now, timeToLive: ttl) else {
                    shard.remove(at: found)
                    removedExpired = true
                    return .failure(.unknownSession)
                }
                if let menu {
                    switch shard[position].freshness(for: menu) {
                    case .current: break
                    case .newer: return .failure(.menuChanged)
                    case .stale(let state, let epoch):
                        stale = (state, epoch)
                        return .success(nil)
                    }
                }
                do throws(SessionStoreError) {
                    let changes = try journals(shard[position])
                    if changes {
                        shard[position].pending = true
                    } else {
                        touchIfDue(id, &shard[position], now: now)
                    }
                    return .success(changes)
                } catch {
                    return .failure(error)
                }
            }
            if removedExpired {
                table.countExpiredOnUse()
                table.releaseSlots()
            }
            if let changes = try outcome.get() { return changes }
            if let stale, let menu {
                table.rebase(id, stale.state, from: stale.epoch, to: menu)
                continue
            }
            try writer.waitForSettlement(after: mark, deadline: deadline)
        }
    }

    /// Queues a record of a use of a session that was only read, when the journal's record of
    /// its last use is older than ``touchInterval``. Never waits for the disk: best effort, a
    /// dropped or failed record only leaves the older time.
    private func touchIfDue(_ id: SessionID, _ entry: inout Entry, now: SessionTime) {
        guard now.milliseconds(since: entry.journaledUse) >= touchInterval else { return }
        writer.enqueue(Self.records([.touched(id)], time: wallClock()))
        entry.journaledUse = now
    }

    package func changes(of id: SessionID, since: Int, in menu: MenuGeneration) throws(SessionStoreError)
        -> SessionChanges
    {
        try noteMenu(menu)
        return try table.changes(of: id, since: since, in: menu, now: clock(), settlement: writer)
    }

    /// Makes `menu` the newest and carries every session over to it (see ``SessionStore/adopt(_:)``),
    /// again every 50 ms while sessions with a write in flight remain, then writes a fresh
    /// snapshot, so the files hold what memory holds (a group that left the menu stays dropped
    /// even if a later menu brings its id back, as it is in memory).
    @discardableResult
    package func adopt(_ menu: MenuGeneration) -> SessionRebaseReport {
        var total = SessionRebaseReport()
        // No session is carried over before the reload's record is in the journal: while the
        // disk refuses it, requests carry their own sessions over once it takes it.
        var logged = false
        while true {
            do {
                try noteMenu(menu)
                break
            } catch {
                if closed.load(ordering: .relaxed) { return total }
                if !logged {
                    log("data dir \(directory): cannot journal the menu reload yet (\(error)); retrying every 50 ms")
                    logged = true
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        while true {
            let pass = table.rebaseAll(to: menu)
            total.rebased += pass.rebased
            total.remaining = pass.remaining
            total.superseded = pass.superseded
            guard pass.remaining > 0, !pass.superseded, !closed.load(ordering: .relaxed) else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        if !total.superseded, !closed.load(ordering: .relaxed) {
            do { try compactNow() } catch {
                log("data dir \(directory): the snapshot after the menu reload failed: \(error)")
            }
        }
        return total
    }

    /// Drops sessions idle longer than the time to live from memory. Nothing is journaled: replay
    /// drops them by the times the files record (never later than the real last use).
    /// O(expired + shards); writes already remove a few from their shard's oldest end each. A
    /// pending session (its write's `settle` still needs it) is never removed.
    @discardableResult
    package func sweepExpired() -> Int {
        table.removeExpired(now: clock())
    }

    /// Refuses later writes (`.unavailable`), lets the journal writer finish, waits for a
    /// running compaction, flushes the journal and releases the data directory. Waits at most
    /// `max(storeTimeout, 5 s)` for all of it: on a hung disk it logs so and returns, and the rest
    /// happens if the disk ever answers (what was written survives the process's exit).
    package func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let wait = max(storeTimeout, .seconds(5))
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            writer.stop()
            compaction.sync {}
            journal.close()
            directoryLock.withLock { $0 = nil }
            finished.signal()
        }
        thread.name = "menu-server store close"
        thread.start()
        if finished.wait(timeout: .now() + .milliseconds(Int(wait / .milliseconds(1)))) == .timedOut {
            log(
                "data dir \(directory): the disk did not finish the final journal write and flush within \(wait); "
                    + "stopping without waiting for it (changes answered 200 under --fsync always are on disk)")
        }
    }
}
