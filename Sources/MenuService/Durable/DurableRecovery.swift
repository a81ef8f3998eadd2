import MenuModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one start-up found in the data directory and what it repaired: `sessions` plus
/// `expiredSessions` are the sessions the files held; every repair was also logged. The replay
/// it describes read each byte of the snapshot and journals once: O(live state).
public struct DurableRecoveryReport: Sendable {
    /// Live sessions restored.
    public var sessions = 0
    /// Sessions in the files that had been idle longer than the time to live: not restored.
    public var expiredSessions = 0
    public var snapshotBytes: Int64 = 0
    public var journalFiles = 0
    public var journalRecords = 0
    public var journalBytes: Int64 = 0
    /// Saved changes naming a group the menu no longer has (or that is now a row): skipped.
    public var skippedGroupChanges = 0
    /// Damaged files found, each cut back to its last good record.
    public var repairs: [Repair] = []
    /// Time spent reading, replaying and repairing.
    public var duration: Duration = .zero

    /// One line for the start-up log: what was restored, from what, how fast.
    public var summary: String {
        let tenths = Int((duration / .microseconds(100)).rounded())
        return "restored \(sessions) sessions (\(expiredSessions) expired) from a \(snapshotBytes)-byte snapshot and "
            + "\(journalRecords) journal records in \(tenths / 10).\(tenths % 10) ms"
            + (repairs.isEmpty ? "" : "; \(repairs.count) damaged file(s) repaired, see above")
    }

    /// One damaged file: where it went bad, what was dropped and where the dropped bytes went.
    public struct Repair: Sendable, CustomStringConvertible {
        public var file: String
        /// "torn tail" (a write cut short: expected after a crash) or "corrupt record".
        public var kind: String
        /// The file is valid before this byte offset and now ends there.
        public var offset: Int
        public var droppedBytes: Int
        public var detail: String
        /// Where the dropped bytes were saved (corrupt data only), or later files moved aside.
        public var savedAs: [String]

        public var description: String {
            var text = "\(file): \(kind) at byte \(offset) (\(detail)); "
            text += "\(droppedBytes) bytes from there on dropped and the file truncated to \(offset) bytes"
            if !savedAs.isEmpty { text += "; dropped data kept in " + savedAs.joined(separator: ", ") }
            return text
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
        /// The snapshot was damaged: write a fresh one before serving.
        var needsCompaction: Bool
        var report: DurableRecoveryReport
    }

    /// A session as the files describe it: resolved group states by id, in the order set (a
    /// later state of a group wins), and its last use.
    struct SavedSession {
        var groups: [(id: String, isExpanded: Bool)] = []
        var lastUsed: Int64

        mutating func set(_ group: String, _ isExpanded: Bool, at time: Int64) {
            groups.append((group, isExpanded))
            lastUsed = max(lastUsed, time)
        }

        mutating func use(at time: Int64) { lastUsed = max(lastUsed, time) }
    }

    static func run(directory: String, menu: Menu, timeToLive: Duration, now: (SessionTime, Int64),
                    log: @escaping @Sendable (String) -> Void) throws(DurableStoreError) -> Result {
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
        var shards = [[SessionID: DurableSessionStore.Entry]](repeating: [:], count: SessionTable<DurableSessionStore.Entry>.shardCount)
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
            var view = FlattenedView(menu: menu)
            for (group, isExpanded) in saved.groups {
                do {
                    _ = try view.setExpanded(group, isExpanded)
                } catch {
                    replay.report.skippedGroupChanges += 1
                    if skippedSamples.count < 5, !skippedSamples.contains(group) { skippedSamples.append(group) }
                }
            }
            let lastUsed = now.0.advanced(byMilliseconds: -idle)
            shards[SessionTable<DurableSessionStore.Entry>.shardIndex(of: id)][id] = DurableSessionStore.Entry(
                state: view.state, lastUsed: lastUsed, journaledUse: lastUsed)
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
            log("data dir \(directory): \(report.skippedGroupChanges) saved changes name groups the menu no longer has "
                + "(e.g. \(skippedSamples.map { "\"\($0)\"" }.joined(separator: ", "))); they were skipped")
        }
        report.journalBytes = replay.journalBytes
        return Result(lock: lock, shards: shards, sessionCount: sessionCount, snapshotBytes: report.snapshotBytes, journalFile: target.file,
                      generation: target.generation, journalFileBytes: target.bytes, journalBytes: replay.journalBytes,
                      needsCompaction: replay.snapshotDamaged, report: report)
    }

    /// The replay proper: reads the files in order, applies their records to `sessions`, and
    /// repairs the first damage it meets.
    struct Replay {
        let directory: String
        let log: @Sendable (String) -> Void
        var sessions: [SessionID: SavedSession] = [:]
        var report = DurableRecoveryReport()
        var snapshotGeneration: UInt64 = 0
        var snapshotDamaged = false
        /// Journals replayed and kept, oldest first, with their valid length.
        var journals: [(generation: UInt64, bytes: Int64)] = []
        var journalBytes: Int64 { journals.reduce(0) { $0 + $1.bytes } }
        let stamp = DurableSessionStore.milliseconds()

        init(directory: String, log: @escaping @Sendable (String) -> Void) {
            self.directory = directory
            self.log = log
        }

        func path(_ name: String) -> String { directory + "/" + name }

        mutating func readAll() throws(DurableIOError) {
            try DurableFile.remove(path(temporarySnapshotName))
            try readSnapshot()
            let names = try DurableFile.names(in: directory)
            let generations = names.compactMap(DurableJournal.generation(fromFileName:)).sorted()
            for generation in generations where generation < snapshotGeneration {
                // Already in the snapshot: left over when a crash came between the snapshot and this removal.
                try DurableFile.remove(path(DurableJournal.fileName(generation: generation)))
            }
            let live = generations.filter { $0 >= snapshotGeneration }
            for (index, generation) in live.enumerated() {
                let intact = try replayJournal(generation: generation)
                if !intact {
                    // Replay stops at the first damage: later journals would apply on top of a gap.
                    let later = live[(index + 1)...].map { DurableJournal.fileName(generation: $0) }
                    var moved: [String] = []
                    for name in later {
                        let aside = name + ".corrupt-\(stamp)"
                        try DurableFile.rename(path(name), to: path(aside))
                        moved.append(aside)
                    }
                    if !moved.isEmpty {
                        report.repairs[report.repairs.count - 1].savedAs += moved
                        log("data dir \(directory): later journals not replayed, moved aside: \(moved.joined(separator: ", "))")
                    }
                    break
                }
            }
            report.journalFiles = journals.count
        }

        private mutating func readSnapshot() throws(DurableIOError) {
            let snapshotPath = path(snapshotName)
            guard DurableFile.kind(of: snapshotPath).exists else { return }
            let bytes = try DurableFile.open(snapshotPath, O_RDONLY).readAll()
            report.snapshotBytes = Int64(bytes.count)
            sessions.reserveCapacity(bytes.count / 37)  // 37 bytes: the smallest session record
            var damage: DurableRecord.Damage?
            var ended = false
            if let header = readHeader(bytes, magic: DurableRecord.snapshotMagic) {
                snapshotGeneration = header.generation
                var scanner = DurableRecord.Scanner(bytes, from: header.end)
                loop: while damage == nil {
                    switch scanner.next() {
                    case .end:
                        if !ended { damage = .init(kind: .tornTail, offset: bytes.count, detail: "no end record") }
                        break loop
                    case .damaged(let found):
                        damage = found
                    case .record(let payload):
                        switch DurableRecord.decodeSnapshotItem(payload) {
                        case .session(let id, let lastUsed, let groups)? where !ended:
                            sessions[id] = SavedSession(groups: groups, lastUsed: lastUsed)
                        case .end(let count)? where !ended && count == sessions.count:
                            ended = true
                        default:
                            damage = scanner.undecodable(payload, "unexpected snapshot record")
                        }
                    }
                }
            } else {
                damage = .init(kind: .corrupt, offset: 0, detail: "not a snapshot header")
            }
            guard let damage else { return }
            // A snapshot is written whole and renamed into place, so damage here is the disk's doing.
            // Keep what was readable, save the file for inspection, and write a fresh snapshot.
            let aside = snapshotName + ".corrupt-\(stamp)"
            try DurableFile.rename(snapshotPath, to: path(aside))
            snapshotDamaged = true
            let repair = DurableRecoveryReport.Repair(
                file: snapshotName, kind: DurableRecord.Damage.Kind.corrupt.rawValue, offset: damage.offset,
                droppedBytes: bytes.count - damage.offset, detail: damage.detail, savedAs: [aside])
            report.repairs.append(repair)
            log("data dir \(directory): \(repair); \(sessions.count) sessions before it are kept; "
                + "sessions after it are lost unless the journal recreates them")
        }

        /// Replays one journal; false when it was damaged (and has been repaired).
        private mutating func replayJournal(generation: UInt64) throws(DurableIOError) -> Bool {
            let name = DurableJournal.fileName(generation: generation)
            let file = try DurableFile.open(path(name), O_RDWR)
            let bytes = try file.readAll()
            guard let header = readHeader(bytes, magic: DurableRecord.journalMagic) else {
                let kind: DurableRecord.Damage.Kind = bytes.count < 64 ? .tornTail : .corrupt
                return try repair(name, file: nil, bytes, .init(kind: kind, offset: 0, detail: "no valid journal header"), records: 0)
            }
            var scanner = DurableRecord.Scanner(bytes, from: header.end)
            var records = 0
            while true {
                switch scanner.next() {
                case .end:
                    journals.append((generation, Int64(bytes.count)))
                    report.journalRecords += records
                    return true
                case .damaged(let damage):
                    return try repair(name, file: file, bytes, damage, records: records)
                case .record(let payload):
                    guard let (event, time) = DurableRecord.decodeEvent(payload) else {
                        return try repair(name, file: file, bytes, scanner.undecodable(payload, "not a journal record"), records: records)
                    }
                    apply(event, time: time)
                    records += 1
                }
            }
        }

        mutating func apply(_ event: DurableRecord.Event, time: Int64) {
            switch event {
            case .created(let id):
                // A re-created id starts over: replaying a record already in the snapshot is harmless.
                sessions[id] = SavedSession(lastUsed: time)
            case .deleted(let id):
                sessions[id] = nil
            case .groupSet(let id, let group, let isExpanded):
                // Nothing when the session is gone (deleted, or expired before the snapshot).
                sessions[id]?.set(group, isExpanded, at: time)
            case .touched(let id):
                sessions[id]?.use(at: time)
            }
        }

        /// Cuts a damaged journal back to its last good record. A torn tail (the expected result
        /// of a crash mid-write) is simply dropped; the bytes of a corrupt record and everything
        /// after it are first saved to `<name>.corrupt-<time>`. A file without a valid header is
        /// removed (torn) or moved aside (corrupt).
        private mutating func repair(_ name: String, file: DurableFile?, _ bytes: [UInt8], _ damage: DurableRecord.Damage,
                                     records: Int) throws(DurableIOError) -> Bool {
            var saved: [String] = []
            if damage.kind == .corrupt {
                let aside = name + ".corrupt-\(stamp)"
                if file == nil {
                    try DurableFile.rename(path(name), to: path(aside))
                } else {
                    let copy = try DurableFile.open(path(aside), O_WRONLY | O_CREAT | O_EXCL)
                    try copy.write(Array(bytes[damage.offset...]), at: 0)
                    try copy.sync()
                }
                saved.append(aside)
            } else if file == nil {
                try DurableFile.remove(path(name))
            }
            if let file {
                try file.truncate(to: Int64(damage.offset))
                try file.sync()
                journals.append((DurableJournal.generation(fromFileName: name)!, Int64(damage.offset)))
            }
            report.journalRecords += records
            let repair = DurableRecoveryReport.Repair(file: name, kind: damage.kind.rawValue, offset: damage.offset,
                                                      droppedBytes: bytes.count - damage.offset, detail: damage.detail,
                                                      savedAs: saved)
            report.repairs.append(repair)
            log("data dir \(directory): \(repair); replay stopped there, the \(records) records before it are kept"
                + (damage.kind == .corrupt ? " (changes in the dropped bytes are lost)" : ""))
            return false
        }

        /// The magic and the header record: the generation, and where the records start.
        func readHeader(_ bytes: [UInt8], magic: [UInt8]) -> (generation: UInt64, end: Int)? {
            guard bytes.count >= magic.count, Array(bytes[0 ..< magic.count]) == magic else { return nil }
            var scanner = DurableRecord.Scanner(bytes, from: magic.count)
            guard case .record(let payload) = scanner.next(), let generation = DurableRecord.decodeFileHeader(payload)
            else { return nil }
            return (generation, scanner.offset)
        }

        /// The newest journal kept, opened for appends at its valid end; a new one when none is left.
        func openJournalForAppending(time: Int64) throws(DurableIOError) -> (file: DurableFile, generation: UInt64, bytes: Int64) {
            if let last = journals.last {
                let file = try DurableFile.open(path(DurableJournal.fileName(generation: last.generation)), O_WRONLY)
                return (file, last.generation, last.bytes)
            }
            let (file, bytes) = try DurableJournal.createFile(in: directory, generation: snapshotGeneration, time: time)
            return (file, snapshotGeneration, bytes)
        }
    }
}
