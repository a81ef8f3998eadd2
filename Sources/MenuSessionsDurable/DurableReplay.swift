import MenuModel
import MenuSessions

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DurableRecovery {
    /// The replay proper: reads the snapshot, then every journal since it, and applies the
    /// records each one keeps (``DurableSalvage``: damage costs the records it touches, later
    /// records and later journals still replay) to `sessions`.
    ///
    /// Invariant: no byte is dropped before it is set aside. A damaged file is first copied,
    /// from its first damaged byte to its end, to `<name>.corrupt-<milliseconds>` beside it
    /// (flushed, its name flushed); only then is it cut, removed or replaced. A journal damaged
    /// only at its tail is cut back to its intact part; a damaged snapshot, and a journal with
    /// damage before its end, are left as they are until the fresh snapshot that the store
    /// writes before it serves replaces them, so a crash before that repeats the same recovery.
    struct Replay {
        let directory: String
        let log: @Sendable (String) -> Void
        var sessions: [SessionID: SavedSession] = [:]
        /// A journal state record whose later parts have not all been read yet, with the number
        /// of entries still missing: installed once they are, dropped by any other record of the
        /// session (the parts of one write are contiguous, so a gap means one was lost).
        var partialStates: [SessionID: (state: SavedSession, missing: Int)] = [:]
        var report = DurableRecoveryReport()
        var snapshotGeneration: UInt64 = 0
        /// The most reloads any record counts (``DurableRecord/Event``): a record of a session
        /// written on a reload's menu counts it even if the reload's own record was lost.
        var reloads = 0
        /// Damage that only a fresh snapshot repairs.
        var needsFreshSnapshot = false
        /// Journals replayed and kept, oldest first, with the length appends continue from.
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
            let generations = try DurableFile.names(in: directory).compactMap(DurableJournal.generation(fromFileName:))
                .sorted()
            try readSnapshot(oldestJournal: generations.first)
            for generation in generations where generation < snapshotGeneration {
                // Already in the snapshot: left over when a crash came between the snapshot and this removal.
                try DurableFile.remove(path(DurableJournal.fileName(generation: generation)))
            }
            for generation in generations where generation >= snapshotGeneration {
                try replayJournal(generation: generation)
            }
            report.journalFiles = journals.count
        }

        private mutating func readSnapshot(oldestJournal: UInt64?) throws(DurableIOError) {
            let snapshotPath = path(snapshotName)
            guard DurableFile.kind(of: snapshotPath).exists else { return }
            let bytes = try DurableFile.open(snapshotPath, O_RDONLY).readAll()
            report.snapshotBytes = Int64(bytes.count)
            sessions.reserveCapacity(bytes.count / 37)  // 37 bytes: the smallest session record
            var listed: Int?  // the end record's session count
            var snapshotReloads = 0  // the reload count of the session records that follow
            var salvage = DurableSalvage(
                bytes, magic: DurableRecord.snapshotMagic, kinds: DurableRecord.snapshotKinds,
                isRecord: { DurableRecord.decodeSnapshotItem($0) != nil },
                consume: { payload in
                    guard listed == nil, let item = DurableRecord.decodeSnapshotItem(payload) else { return false }
                    switch item {
                    case .session(let id, let lastUsed, let groups, let revision):
                        sessions[id] = SavedSession(
                            groups: groups, lastUsed: lastUsed, revision: revision, reloads: snapshotReloads)
                    case .sessionState(let id, let lastUsed, let revision, let base, let entries):
                        sessions[id] = SavedSession(
                            lastUsed: lastUsed, revision: revision, reloads: snapshotReloads, base: base,
                            entries: entries)
                    case .reloads(let count):
                        snapshotReloads = count
                        reloads = max(reloads, count)
                    case .moreGroups(let id, let entries):
                        // Nothing when the session's first record was lost.
                        sessions[id]?.add(entries)
                    case .end(let count):
                        listed = count
                    }
                    return true
                })
            if listed == nil {
                salvage.damage.append(
                    .init(kind: .tornTail, offset: bytes.count, end: bytes.count, detail: "no end record"))
            }
            guard !salvage.damage.isEmpty else {
                snapshotGeneration = salvage.generation ?? 0
                return
            }
            // Journals older than the snapshot are left over from a crash before their removal:
            // replay them too when it is damaged, for what it lost. Replaying a journal the
            // snapshot already holds is harmless: its records are resolved states, and the newer
            // journals replayed after it end in the same state.
            snapshotGeneration = min(salvage.generation ?? .max, oldestJournal ?? .max)
            if snapshotGeneration == .max { snapshotGeneration = 0 }
            // A snapshot is written whole and renamed into place, so damage here is the disk's doing.
            needsFreshSnapshot = true
            var note = "\(sessions.count) sessions kept"
            if let listed, listed > sessions.count {
                note += " of the \(listed) it lists (\(listed - sessions.count) lost)"
            }
            if salvage.generation == nil || salvage.generation != snapshotGeneration {
                note += "; every journal on disk is replayed after it, any older than it included"
            }
            try setAside(snapshotName, bytes, salvage, from: 0, outcome: "a fresh snapshot replaces it", note: note)
        }

        private mutating func replayJournal(generation: UInt64) throws(DurableIOError) {
            let name = DurableJournal.fileName(generation: generation)
            let file = try DurableFile.open(path(name), O_RDWR)
            let bytes = try file.readAll()
            let salvage = DurableSalvage(
                bytes, magic: DurableRecord.journalMagic, kinds: DurableRecord.journalKinds,
                isRecord: { DurableRecord.decodeEvent($0) != nil },
                consume: { payload in
                    guard let (event, time) = DurableRecord.decodeEvent(payload) else { return false }
                    apply(event, time: time)
                    return true
                })
            report.journalRecords += salvage.keptRecords
            guard let first = salvage.firstDamage else {
                journals.append((generation, Int64(bytes.count)))
                return
            }
            if salvage.isIntactBeforeATail {
                try setAside(
                    name, bytes, salvage, from: first, outcome: "the file was cut back to its \(first) intact bytes")
                try file.truncate(to: Int64(first))
                try file.sync()
                journals.append((generation, Int64(first)))
            } else if salvage.generation == nil && salvage.keptRecords == 0 {
                try setAside(name, bytes, salvage, from: 0, outcome: "nothing in it was readable; it was removed")
                try DurableFile.remove(path(name))
            } else {
                needsFreshSnapshot = true
                try setAside(
                    name, bytes, salvage, from: first,
                    outcome: "the file stays as it is until the fresh snapshot written now replaces it")
                journals.append((generation, Int64(bytes.count)))
            }
        }

        mutating func apply(_ event: DurableRecord.Event, time: Int64) {
            if !partialStates.isEmpty, let session = event.session {
                if case .stateMore = event {} else { partialStates[session] = nil }
            }
            switch event {
            case .created(let id, let reloads):
                // A re-created id starts over: replaying a record already in the snapshot is harmless.
                sessions[id] = SavedSession(lastUsed: time, reloads: reloads)
                self.reloads = max(self.reloads, reloads)
            case .deleted(let id):
                sessions[id] = nil
            case .groupSet(let id, let group, let isExpanded, let revision, let reloads):
                // Nothing when the session is gone (deleted, or expired before the snapshot).
                guard let before = sessions[id]?.revision else { return }
                // In place: the session's groups are not copied.
                sessions[id]!.set(group, isExpanded, at: time)
                // An older file's record names no revision: every journaled set changed the state.
                if let revision {
                    sessions[id]!.revision = revision
                    sessions[id]!.reloads = reloads
                    self.reloads = max(self.reloads, reloads)
                } else {
                    sessions[id]!.revision = before + 1
                }
            case .touched(let id):
                sessions[id]?.use(at: time)
            case .reload(let count):
                reloads = max(reloads, count)
            case .state(let id, let revision, let reloads, let base, let total, let entries):
                guard let lastUsed = sessions[id]?.lastUsed else { return }
                self.reloads = max(self.reloads, reloads)
                let state = SavedSession(
                    lastUsed: max(lastUsed, time), revision: revision, reloads: reloads, base: base, entries: entries)
                if entries.count < total {
                    partialStates[id] = (state, total - entries.count)
                } else {
                    sessions[id] = state
                }
            case .stateMore(let id, let entries):
                guard var partial = partialStates.removeValue(forKey: id), entries.count <= partial.missing else {
                    return
                }
                partial.state.add(entries)
                partial.state.use(at: time)
                partial.missing -= entries.count
                if partial.missing > 0 {
                    partialStates[id] = partial
                } else if let lastUsed = sessions[id]?.lastUsed {
                    partial.state.use(at: lastUsed)
                    sessions[id] = partial.state
                }
            }
        }

        /// The newest journal kept, opened for appends at its end; a new one when none is left.
        func openJournalForAppending(time: Int64) throws(DurableIOError) -> (
            file: DurableFile, generation: UInt64, bytes: Int64
        ) {
            if let last = journals.last {
                let file = try DurableFile.open(path(DurableJournal.fileName(generation: last.generation)), O_WRONLY)
                return (file, last.generation, last.bytes)
            }
            let (file, bytes) = try DurableJournal.createFile(in: directory, generation: snapshotGeneration, time: time)
            return (file, snapshotGeneration, bytes)
        }

        /// Copies `bytes[from...]` of the damaged file `name` to `<name>.corrupt-<stamp>` (flushed,
        /// and its name), then reports and logs the repair that `outcome` describes.
        private mutating func setAside(
            _ name: String, _ bytes: [UInt8], _ salvage: DurableSalvage, from start: Int,
            outcome: String, note: String? = nil
        ) throws(DurableIOError) {
            var aside = name + ".corrupt-\(stamp)"
            var attempt = 1
            while DurableFile.kind(of: path(aside)).exists {
                aside = name + ".corrupt-\(stamp)-\(attempt)"
                attempt += 1
            }
            let copy = try DurableFile.open(path(aside), O_WRONLY | O_CREAT | O_EXCL)
            try copy.write(Array(bytes[start...]), at: 0)
            try copy.sync()
            try DurableFile.syncDirectory(directory)
            let first = salvage.damage[0]
            let repair = DurableRecoveryReport.Repair(
                file: name, kind: first.kind.rawValue, offset: first.offset, damage: salvage.damage.map(\.description),
                keptRecords: salvage.keptRecords, keptBytes: salvage.keptBytes, droppedBytes: salvage.droppedBytes,
                droppedRanges: salvage.droppedRanges, repairedLengths: salvage.repairedLengths, savedAs: aside,
                setAsideFrom: start, setAsideBytes: bytes.count - start, outcome: outcome)
            report.repairs.append(repair)
            log("data dir \(directory): \(repair)" + (note.map { "; " + $0 } ?? ""))
        }
    }
}
