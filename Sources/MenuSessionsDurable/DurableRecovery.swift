import MenuModel
import MenuSessions

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one start-up found in the data directory and what it repaired: `sessions` plus
/// `expiredSessions` are the sessions the files held; every repair was also logged. The replay
/// it describes read each byte of the snapshot and journals once: O(live state) (past damage,
/// resynchronising adds at most one checksum per candidate offset; see ``DurableSalvage``).
package struct DurableRecoveryReport: Sendable {
    /// Live sessions restored.
    package var sessions = 0
    /// Sessions in the files that had been idle longer than the time to live: not restored.
    package var expiredSessions = 0
    package var snapshotBytes: Int64 = 0
    package var journalFiles = 0
    package var journalRecords = 0
    package var journalBytes: Int64 = 0
    /// Saved changes naming a group the menu no longer has (or that is now a row): skipped.
    package var skippedGroupChanges = 0
    /// Damaged files found, each set aside and repaired.
    package var repairs: [Repair] = []
    /// Time spent reading, replaying and repairing.
    package var duration: Duration = .zero

    /// One line for the start-up log: what was restored, from what, how fast.
    package var summary: String {
        let tenths = Int((duration / .microseconds(100)).rounded())
        return "restored \(sessions) sessions (\(expiredSessions) expired) from a \(snapshotBytes)-byte snapshot and "
            + "\(journalRecords) journal records in \(tenths / 10).\(tenths % 10) ms"
            + (repairs.isEmpty ? "" : "; \(repairs.count) damaged file(s) repaired, see above")
    }

    /// One damaged file: what was kept, dropped and set aside, and what became of the file.
    package struct Repair: Sendable, CustomStringConvertible {
        package var file: String
        /// The first damage's kind: "torn tail" (a write cut short: expected after a crash) or
        /// "corrupt record".
        package var kind: String
        /// The first damaged byte: the file is intact before it.
        package var offset: Int
        /// Each damaged range: where, what, and whether its bytes were dropped.
        package var damage: [String]
        package var keptRecords: Int
        package var keptBytes: Int
        package var droppedBytes: Int
        /// Damaged ranges whose bytes were dropped (each held at least one record).
        package var droppedRanges: Int
        /// Records kept whose damaged length field was corrected (their checksum confirms it).
        package var repairedLengths: Int
        /// The set-aside copy: every byte of the file from ``setAsideFrom`` to its end, as it was.
        package var savedAs: String
        package var setAsideFrom: Int
        package var setAsideBytes: Int
        /// What became of the file: cut back to its intact part, replaced by a fresh snapshot, removed.
        package var outcome: String

        package var description: String {
            "\(file): " + damage.joined(separator: "; ")
                + "; kept \(keptRecords) records (\(keptBytes) bytes), dropped "
                + "\(droppedBytes) bytes in \(droppedRanges) damaged range(s), repaired \(repairedLengths) record length(s); "
                + "bytes \(setAsideFrom)..<\(setAsideFrom + setAsideBytes) (\(setAsideBytes) bytes) set aside in \(savedAs); "
                + outcome
        }
    }
}

/// Start-up of a ``DurableSessionStore``: lock the directory, replay snapshot then journals,
/// repair damage, choose the journal to append to.
enum DurableRecovery {
    static let lockName = "LOCK"
    static let snapshotName = "snapshot"
    static let temporarySnapshotName = "snapshot.tmp"

    struct Result {
        var lock: DurableFile
        /// The live sessions, already spread over the store's shards.
        var shards: [[SessionID: DurableSessionStore.Entry]]
        var sessionCount: Int
        var snapshotBytes: Int64
        var journalFile: DurableFile
        var generation: UInt64
        var journalFileBytes: Int64
        /// All journal bytes since the snapshot, the open file's included.
        var journalBytes: Int64
        /// The reloads the files record: this process's first menu is at this reload count.
        var reloads: Int
        /// The snapshot was damaged: write a fresh one before serving.
        var needsCompaction: Bool
        var report: DurableRecoveryReport
    }

    /// A session as the files describe it: its base mode and marks (from its last state record)
    /// and its groups' resolved states by id, in the order set (a later state of a group wins;
    /// one equal to what its mode gives is no flip), and its last use.
    struct SavedSession {
        var base: ExpansionMode = .default
        var marks: [PortableState.Mark] = []
        var groups: [PortableState.Flip] = []
        var selection = PortableSelection()
        var lastUsed: Int64
        /// The session's revision as its last record gives it.
        var revision = 0
        /// The reload count of the menu that record was written on: the session's revision grew
        /// by one for each reload the files record after it (``DurableRecord/Event``).
        var reloads = 0

        init(
            lastUsed: Int64, revision: Int = 0, reloads: Int = 0, base: ExpansionMode = .default,
            entries: [DurableRecord.StateEntry] = []
        ) {
            self.lastUsed = lastUsed
            self.revision = revision
            self.reloads = reloads
            self.base = base
            add(entries)
        }

        init(groups: [(id: String, isExpanded: Bool)], lastUsed: Int64, revision: Int, reloads: Int) {
            self.init(lastUsed: lastUsed, revision: revision, reloads: reloads)
            self.groups = groups.map { PortableState.Flip(id: $0.id, isExpanded: $0.isExpanded) }
        }

        mutating func add(_ entries: [DurableRecord.StateEntry]) {
            for entry in entries {
                switch entry {
                case .flip(let id, let isExpanded):
                    groups.append(PortableState.Flip(id: id, isExpanded: isExpanded))
                case .mark(let id, let mode): marks.append(PortableState.Mark(id: id, mode: mode))
                case .selectionToggle(let id): selection.toggled.append(id)
                case .selectedByDefault: selection.all = true
                }
            }
        }

        mutating func set(_ group: String, _ isExpanded: Bool, at time: Int64) {
            groups.append(PortableState.Flip(id: group, isExpanded: isExpanded))
            lastUsed = max(lastUsed, time)
        }

        mutating func use(at time: Int64) { lastUsed = max(lastUsed, time) }

        var portable: PortableState { PortableState(base: base, marks: marks, flips: groups, selection: selection) }
    }

    static func run(
        directory: String, menu generation: MenuGeneration, timeToLive: Duration, now: (SessionTime, Int64),
        log: @escaping @Sendable (String) -> Void
    ) throws(DurableStoreError) -> Result {
        let started = ContinuousClock.now
        func failure(_ reason: String) -> DurableStoreError { DurableStoreError(directory: directory, reason) }
        let kind = DurableFile.kind(of: directory)
        guard kind.exists else { throw failure("it does not exist (create it first, or check the path)") }
        guard kind.isDirectory else { throw failure("it is not a directory") }
        let lock: DurableFile
        do {
            lock = try DurableFile.open(directory + "/" + lockName, O_RDWR | O_CREAT)
            guard try lock.tryLockExclusive() else { throw failure("another menu-server process is using it") }
        } catch let error as DurableStoreError {
            throw error
        } catch let error as DurableIOError {
            throw failure("cannot write in it (\(error.reason))")
        } catch {
            throw failure("\(error)")
        }

        var replay = Replay(directory: directory, log: log)
        do {
            try replay.readAll()
        } catch {
            throw failure("\(error)")
        }

        // Rebuild each session's state on the current menu, dropping the expired ones.
        var shards = [[SessionID: DurableSessionStore.Entry]](
            repeating: [:], count: SessionTable<DurableSessionStore.Entry>.shardCount)
        for index in shards.indices { shards[index].reserveCapacity(replay.sessions.count / shards.count * 9 / 8) }
        var sessionCount = 0
        var skippedSamples: [String] = []
        let ttlMilliseconds = SessionClock.milliseconds(of: timeToLive)
        for (id, saved) in replay.sessions {
            let idle = max(0, now.1 - saved.lastUsed)
            guard idle < ttlMilliseconds else {
                replay.report.expiredSessions += 1
                continue
            }
            var ignored: [String] = []
            let state = SessionState(portable: saved.portable, in: generation.menu, ignoredIDs: &ignored)
            replay.report.skippedGroupChanges += ignored.count
            for group in ignored where skippedSamples.count < 5 && !skippedSamples.contains(group) {
                skippedSamples.append(group)
            }
            let lastUsed = now.0.advanced(byMilliseconds: -idle)
            shards[SessionTable<DurableSessionStore.Entry>.shardIndex(of: id)][id] = DurableSessionStore.Entry(
                state: state, epoch: generation.epoch,
                history: ChangeHistory(revision: saved.revision + replay.reloads - saved.reloads),
                lastUsed: lastUsed,
                journaledUse: lastUsed)
            sessionCount += 1
        }
        replay.sessions = [:]
        replay.report.sessions = sessionCount

        let target: (file: DurableFile, generation: UInt64, bytes: Int64)
        do {
            target = try replay.openJournalForAppending(time: now.1)
            try DurableFile.syncDirectory(directory)
        } catch {
            throw failure("\(error)")
        }
        replay.report.duration = ContinuousClock.now - started

        var report = replay.report
        if report.skippedGroupChanges > 0 {
            log(
                "data dir \(directory): \(report.skippedGroupChanges) saved changes name groups the menu no longer has "
                    + "(e.g. \(skippedSamples.map { "\"\($0)\"" }.joined(separator: ", "))); they were skipped")
        }
        report.journalBytes = replay.journalBytes
        return Result(
            lock: lock, shards: shards, sessionCount: sessionCount, snapshotBytes: report.snapshotBytes,
            journalFile: target.file,
            generation: target.generation, journalFileBytes: target.bytes, journalBytes: replay.journalBytes,
            reloads: replay.reloads, needsCompaction: replay.needsFreshSnapshot, report: report)
    }
}
