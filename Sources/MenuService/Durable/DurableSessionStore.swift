import Dispatch
import MenuModel
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
/// - Write first, then apply: a change is appended to the journal (write(2), under its session's
///   shard lock) before memory changes; when the append fails the caller gets `.unavailable`
///   and memory is untouched. With ``FsyncPolicy/always`` the record is also on disk before
///   memory changes, so no reader ever sees a change that a power cut could take back.
/// - The journal holds resolved states by group id (`set g true`, never "toggle" or a
///   position): replaying a record twice is harmless and a changed menu replays safely.
/// - Every change not in the snapshot is in a journal of the snapshot's generation or later:
///   compaction starts a new journal generation before it reads any shard.
/// - The files stay bounded by the live state: compaction runs once the journals since the
///   snapshot exceed max(`compactionMinimumBytes`, 2 × snapshot size).
///
/// Start-up replays the snapshot, then the journals: O(snapshot + journal) = O(live state)
/// record decoding, plus O(changed groups × depth) to rebuild each session's state.
public final class DurableSessionStore: SessionStore {
    public let menu: Menu
    public let timeToLive: Duration
    /// ``timeToLive`` in whole milliseconds, what the checks compare with.
    var timeToLiveMilliseconds: Int64 { table.timeToLive }
    /// Groups one session may hold changed from the menu's default at most.
    public let maxChangedGroups: Int
    public let directory: String
    public let fsyncPolicy: FsyncPolicy
    /// Journals may grow to max(this, 2 × snapshot size) before a compaction.
    public let compactionMinimumBytes: Int64
    /// What start-up found and repaired.
    public let recovery: DurableRecoveryReport

    let table: SessionTable<Entry>
    let journal: DurableJournal
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

    struct Entry: SessionTableEntry {
        var state: ExpansionState
        var lastUsed: SessionTime
        /// The latest use the journal knows of (each record carries its time).
        var journaledUse: SessionTime
    }

    /// Opens (or starts) the store in `directory`, which must exist and be writable: takes the
    /// directory's lock, replays snapshot and journal, repairs damage after setting it aside (reported through
    /// `log`), and drops sessions idle longer than `timeToLive`. At a full table a new session
    /// evicts the least recently used one idle for `evictionIdle` or longer.
    public convenience init(
        directory: String, menu: Menu, fsync: FsyncPolicy = .everysec, maxSessions: Int = 1_000_000,
        timeToLive: Duration = .seconds(30 * 24 * 3600), evictionIdle: Duration = .seconds(3600),
        maxChangedGroups: Int = 10_000, compactionMinimumBytes: Int64 = 4 << 20,
        log: @escaping @Sendable (String) -> Void = { _ in },
        clock: @escaping @Sendable () -> SessionTime = SessionClock.now,
        wallClock: @escaping @Sendable () -> Int64 = DurableSessionStore.milliseconds
    ) throws(DurableStoreError) {
        let recovered = try DurableRecovery.run(directory: directory, menu: menu, timeToLive: timeToLive,
                                                now: (clock(), wallClock()), log: log)
        self.init(directory: directory, menu: menu, fsync: fsync, maxSessions: maxSessions, timeToLive: timeToLive,
                  evictionIdle: evictionIdle, maxChangedGroups: maxChangedGroups, compactionMinimumBytes: compactionMinimumBytes, recovered: recovered,
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

    private init(directory: String, menu: Menu, fsync: FsyncPolicy, maxSessions: Int, timeToLive: Duration,
                 evictionIdle: Duration, maxChangedGroups: Int, compactionMinimumBytes: Int64, recovered: DurableRecovery.Result,
                 log: @escaping @Sendable (String) -> Void, clock: @escaping @Sendable () -> SessionTime,
                 wallClock: @escaping @Sendable () -> Int64) {
        self.menu = menu
        self.timeToLive = timeToLive
        self.maxChangedGroups = maxChangedGroups
        self.directory = directory
        fsyncPolicy = fsync
        self.compactionMinimumBytes = compactionMinimumBytes
        self.log = log
        self.clock = clock
        self.wallClock = wallClock
        recovery = recovered.report
        directoryLock = Mutex(recovered.lock)
        snapshotBytes = Atomic(recovered.snapshotBytes)
        table = SessionTable(maxSessions: maxSessions, timeToLive: SessionClock.milliseconds(of: timeToLive),
                             evictionIdle: SessionClock.milliseconds(of: evictionIdle), contents: recovered.shards)
        journal = DurableJournal(directory: directory, file: recovered.journalFile, generation: recovered.generation,
                                 fileBytes: recovered.journalFileBytes,
                                 olderBytes: recovered.journalBytes - recovered.journalFileBytes,
                                 policy: fsync, log: log)
    }

    /// Wall-clock time in milliseconds since 1970: the time the files record.
    public static let milliseconds: @Sendable () -> Int64 = {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    public var maxSessions: Int { table.maxSessions }
    /// Sessions currently held (expired ones count until they are removed).
    public var count: Int { table.count }

    /// A journal record is refreshed by a read at most this often (milliseconds), so idle times
    /// survive a restart to within 1/16 of the time to live.
    private var touchInterval: Int64 { max(timeToLiveMilliseconds / 16, 1000) }

    // MARK: SessionStore

    public func create() throws(SessionStoreError) -> SessionID {
        try insert(ExpansionState(), events: { [.created($0)] })
    }

    /// Journals `events(id)` for a fresh id, then inserts the session holding `state`.
    private func insert(_ state: ExpansionState, events: (SessionID) -> [DurableRecord.Event]) throws(SessionStoreError) -> SessionID {
        let now = clock()
        try table.reserveSlot(now: now) { victim throws(SessionStoreError) in
            // Journaled before it leaves memory, as a deletion: a restart must not bring it back.
            var bytes: [UInt8] = []
            DurableRecord.append(.deleted(victim), time: wallClock(), to: &bytes)
            _ = try writeDurably(bytes)
        }
        let id = SessionID.random()
        var bytes: [UInt8] = []
        let time = wallClock()
        for event in events(id) { DurableRecord.append(event, time: time, to: &bytes) }
        let result: Result<Int64, SessionStoreError> = table.withShardForWrite(of: id, now: now) { shard in
            do throws(SessionStoreError) {
                let receipt = try writeDurably(bytes)
                shard.insert(id, Entry(state: state, lastUsed: now, journaledUse: now))
                return .success(receipt.journalBytes)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let journalBytes):
            scheduleCompactionIfNeeded(journalBytes: journalBytes)
            return id
        case .failure(let error):
            table.releaseSlots()
            throw error
        }
    }

    public func delete(_ id: SessionID) throws(SessionStoreError) {
        var bytes: [UInt8] = []
        DurableRecord.append(.deleted(id), time: wallClock(), to: &bytes)
        let now = clock()
        let ttl = timeToLiveMilliseconds
        // nil: the session had expired; it is removed without a record (replay drops it by its
        // times, as the sweep does) and answered as the reads answer it: unknown.
        let result: Result<Int64?, SessionStoreError> = table.withShardForWrite(of: id, now: now) { shard in
            guard let position = shard.position(of: id) else { return .failure(.unknownSession) }
            guard now.milliseconds(since: shard[position].lastUsed) < ttl else {
                shard.remove(at: position)
                return .success(nil)
            }
            do throws(SessionStoreError) {
                let receipt = try writeDurably(bytes)
                shard.remove(at: position)
                return .success(receipt.journalBytes)
            } catch {
                return .failure(error)
            }
        }
        let journalBytes = try result.get()
        table.releaseSlots()
        guard let journalBytes else { throw .unknownSession }
        scheduleCompactionIfNeeded(journalBytes: journalBytes)
    }

    public func state(of id: SessionID) throws(SessionStoreError) -> ExpansionState {
        let now = clock()
        let ttl = timeToLiveMilliseconds
        let found: ExpansionState? = table.withShard(of: id) { shard in
            guard let position = shard.use(id, now: now, timeToLive: ttl) else { return nil }
            touchIfDue(id, &shard[position], now: now)
            return shard[position].state
        }
        guard let found else { throw .unknownSession }
        return found
    }

    public func apply(_ command: ExpansionCommand, to id: SessionID?) throws(SessionStoreError) -> AppliedChange {
        guard let id else {
            // A write without a session: compute on a fresh state, then journal and store it as a new session.
            var view = FlattenedView(menu: menu)
            let change = try InMemorySessionStore.run(command, on: &view, maxChangedGroups: maxChangedGroups)
            let changed = view.state != ExpansionState()
            let newID = try insert(view.state) { id in
                changed ? [.created(id), .groupSet(id, group: change.id, isExpanded: change.isExpanded)] : [.created(id)]
            }
            return AppliedChange(sessionID: newID, created: true, change: change, state: view.state)
        }
        let now = clock()
        let ttl = timeToLiveMilliseconds
        let menu = self.menu
        let limit = maxChangedGroups
        let outcome: Result<(AppliedChange, Int64?), SessionStoreError> = table.withShardForWrite(of: id, now: now) { shard in
            guard let position = shard.use(id, now: now, timeToLive: ttl) else { return .failure(.unknownSession) }
            var entry = shard[position]
            // Work on a copy: the session keeps its old state unless the journal takes the change.
            var view = FlattenedView(menu: menu, state: entry.state)
            let change: ExpansionChange
            do throws(SessionStoreError) {
                change = try InMemorySessionStore.run(command, on: &view, maxChangedGroups: limit)
            } catch {
                shard[position] = entry
                return .failure(error)
            }
            var journalBytes: Int64?
            if view.state != entry.state {
                var bytes: [UInt8] = []
                DurableRecord.append(.groupSet(id, group: change.id, isExpanded: change.isExpanded), time: wallClock(), to: &bytes)
                do throws(SessionStoreError) {
                    journalBytes = try writeDurably(bytes).journalBytes
                } catch {
                    shard[position] = entry  // only the use is recorded
                    return .failure(error)
                }
                entry.state = view.state
                entry.journaledUse = now
            } else {
                touchIfDue(id, &entry, now: now)
            }
            shard[position] = entry
            return .success((AppliedChange(sessionID: id, created: false, change: change, state: view.state), journalBytes))
        }
        let (applied, journalBytes) = try outcome.get()
        if let journalBytes { scheduleCompactionIfNeeded(journalBytes: journalBytes) }
        return applied
    }

    /// Appends `bytes` and, with ``FsyncPolicy/always``, waits until they are on disk.
    /// Called under a shard lock: the journal order of one session's records is its apply order.
    private func writeDurably(_ bytes: [UInt8]) throws(SessionStoreError) -> DurableJournal.Receipt {
        let receipt = try journal.append(bytes)
        if fsyncPolicy == .always { try journal.waitUntilDurable(receipt.position) }
        return receipt
    }

    /// Journals a use of a session that was only read, when the journal's record of its last use
    /// is older than ``touchInterval``. Best effort: a failed write only leaves the older time.
    private func touchIfDue(_ id: SessionID, _ entry: inout Entry, now: SessionTime) {
        guard now.milliseconds(since: entry.journaledUse) >= touchInterval else { return }
        var bytes: [UInt8] = []
        DurableRecord.append(.touched(id), time: wallClock(), to: &bytes)
        if (try? journal.append(bytes)) != nil { entry.journaledUse = now }
    }

    /// Drops sessions idle longer than the time to live from memory. Nothing is journaled: replay
    /// drops them by the times the files record (never later than the real last use).
    /// O(expired + shards); writes already remove a few from their shard's oldest end each.
    @discardableResult
    public func sweepExpired() -> Int {
        table.removeExpired(now: clock())
    }

    /// Waits for a running compaction, flushes the journal and releases the data directory.
    /// Later writes answer `.unavailable`.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        compaction.sync {}
        journal.close()
        directoryLock.withLock { $0 = nil }
    }
}

/// Why the data directory cannot be used at start-up (missing, not a directory, not writable,
/// in use by another process, unreadable files). `MenuServer` turns it into a start-up error,
/// and `menu-server` exits 2 with ``description``, which always names the directory.
public struct DurableStoreError: Error, Sendable, CustomStringConvertible {
    public var directory: String
    public var reason: String

    init(directory: String, _ reason: String) {
        self.directory = directory
        self.reason = reason
    }

    public var description: String { "cannot use data directory \(directory): \(reason)" }
}
