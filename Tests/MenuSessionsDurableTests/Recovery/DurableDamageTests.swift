import ChildProcess
import DurableTestSupport
import Foundation
import MenuAppTestSupport
import MenuModel
import Testing

@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

/// Damage at every byte of a small data directory, one position at a time. The oracle is
/// independent of the store: the changes this test made (each toggle's acknowledged result) and
/// the frame boundaries of the files, so it knows which record every byte belongs to.
@Suite("Durable: a damaged byte anywhere")
struct DurableDamageTests {
    /// A data directory as a finished store leaves it: a snapshot of four sessions, then a
    /// journal of two more sessions and sixteen toggles over all six, and what each session holds.
    struct Base {
        var files: [String: [UInt8]] = [:]
        /// Each snapshot session's groups as the snapshot holds them, by record, in file order.
        var snapshotSessions: [(id: SessionID, groups: [String: Bool])] = []
        /// Journal records in file order (after the header): a new session, or a group set.
        var journalRecords: [(id: SessionID, group: String?, isExpanded: Bool)] = []
        var journalName = ""
    }

    static let menu = DurableFixtures.menu()

    static let base: Base = {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        var base = Base()
        do {
            let store = try durableOpen(directory, menu: menu)
            var ids = try (0 ..< 4).map { _ in try store.create() }
            for step in 0 ..< 8 {
                _ = try store.apply(.toggle(groupID: DurableFixtures.groups[step % 5]), to: ids[step % 4])
            }
            try store.compactNow()
            for _ in 0 ..< 2 {
                let id = try store.create()
                ids.append(id)
                base.journalRecords.append((id, nil, false))
            }
            for step in 0 ..< 16 {
                let applied = try store.apply(
                    .toggle(groupID: DurableFixtures.groups[(step * 3) % 5]), to: ids[step % 6])
                base.journalRecords.append(
                    (ids[step % 6], applied.change.groupChange!.id, applied.change.groupChange!.isExpanded))
            }
            store.close()
            for name in directory.fileSizes.keys where name != "LOCK" {
                base.files[name] = Array(try Data(contentsOf: URL(fileURLWithPath: directory.file(name))))
            }
            base.journalName = try #require(directory.journalNames.last)
            // Which session each snapshot record holds: read with the format's decoder.
            let snapshot = try #require(base.files["snapshot"])
            var offset = try #require(DurableRecord.frame(in: snapshot, at: DurableRecord.snapshotMagic.count)).endIndex
            while let payload = DurableRecord.frame(in: snapshot, at: offset) {
                if case .session(let id, _, let groups, _)? = DurableRecord.decodeSnapshotItem(payload) {
                    base.snapshotSessions.append(
                        (id, Dictionary(uniqueKeysWithValues: groups.map { ($0.id, $0.isExpanded) })))
                }
                offset = payload.endIndex
            }
        } catch {
            Issue.record("building the base directory: \(error)")
        }
        return base
    }()

    /// The frames of a file after its magic: each one's start, in order, and the file's size.
    static func frameStarts(_ bytes: [UInt8]) -> [Int] {
        var starts: [Int] = []
        var offset = DurableRecord.journalMagic.count
        while let payload = DurableRecord.frame(in: bytes, at: offset) {
            starts.append(offset)
            offset = payload.endIndex
        }
        return starts
    }

    /// What every session must hold when record `lostSnapshot` of the snapshot or `lostJournal`
    /// of the journal (counted after the header) is lost: nil for a session that must be gone.
    static func expected(lostSnapshot: Int?, lostJournal: Int?) -> [SessionID: [String: Bool]?] {
        let defaults = durableExpansion(SessionState(), menu: menu)
        var sessions: [SessionID: [String: Bool]?] = [:]
        for (index, saved) in base.snapshotSessions.enumerated() {
            sessions[saved.id] = index == lostSnapshot ? .some(nil) : defaults.merging(saved.groups) { $1 }
        }
        for (index, record) in base.journalRecords.enumerated() where index != lostJournal {
            if let group = record.group {
                if case .some(.some(var groups)) = sessions[record.id] {
                    groups[group] = record.isExpanded
                    sessions[record.id] = groups
                }
            } else {
                sessions[record.id] = defaults
            }
        }
        for record in base.journalRecords where sessions[record.id] == nil { sessions[record.id] = .some(nil) }
        return sessions
    }

    /// Writes the base files with `file`'s byte at `position` changed, opens a store on them and
    /// checks it against the oracle; then checks that the repaired directory opens cleanly.
    static func check(_ file: String, position: Int, lostRecord: Int?, in parent: String) throws {
        let directory = DurableTemporaryDirectory(in: parent)
        defer { directory.remove() }
        var damaged: [UInt8] = []
        for (name, original) in base.files {
            var bytes = original
            if name == file {
                bytes[position] ^= UInt8(1) << UInt8(position % 8)
                damaged = bytes
            }
            try Data(bytes).write(to: URL(fileURLWithPath: directory.file(name)))
        }
        let label = "\(file) byte \(position) (record \(lostRecord.map(String.init) ?? "none") lost)"
        let expected =
            file == "snapshot"
            ? expected(lostSnapshot: lostRecord, lostJournal: nil)
            : expected(lostSnapshot: nil, lostJournal: lostRecord)
        for round in 0 ..< 2 {
            let log = DurableLogRecorder()
            let store = try durableOpen(directory, menu: menu, log: log)
            defer { store.close() }
            for (id, groups) in expected {
                if let groups {
                    do {
                        #expect(
                            durableExpansion(try store.state(of: id), menu: menu) == groups, "\(label), round \(round)")
                    } catch {
                        Issue.record("\(label), round \(round): session \(id): \(error)")
                    }
                } else {
                    #expect(durableError { try store.state(of: id) } == .unknownSession, "\(label), round \(round)")
                }
            }
            if round == 1 {
                #expect(store.recovery.repairs.isEmpty, "\(label): repaired again: \(log.lines)")
                continue
            }
            // The damaged byte and everything after it are in the set-aside copy, as they were.
            let repair = try #require(store.recovery.repairs.first { $0.file == file }, "\(label): no repair")
            let aside = Array(try Data(contentsOf: URL(fileURLWithPath: directory.file(repair.savedAs))))
            #expect(repair.setAsideFrom <= position && aside == Array(damaged[repair.setAsideFrom...]), "\(label)")
            #expect(
                log.lines.contains { $0.contains(repair.savedAs) && $0.contains("kept ") }, "\(label): \(log.lines)")
        }
    }

    /// Runs `body` with a directory to make the test directories in: a tmpfs when this process
    /// may mount one (each position costs a dozen fsyncs, free there), else the temporary directory.
    static func withScratch(_ body: (String) throws -> Void) throws {
        let scratch = DurableTemporaryDirectory()
        defer { scratch.remove() }
        let mounted = DurableMounts.canMount && (try? DurableMounts.tmpfs(at: scratch.path, size: "16m")) != nil
        defer { if mounted { DurableMounts.unmount(scratch.path) } }
        try body(scratch.path)
    }

    /// The record a damaged byte costs: none in the magic or the header, none in a length field
    /// (the checksum confirms the right length), else the record it is in.
    static func lostRecord(at position: Int, frames: [Int]) -> Int? {
        guard let frame = frames.lastIndex(where: { $0 <= position }), frame > 0, position - frames[frame] >= 4 else {
            return nil
        }
        return frame - 1
    }

    @Test(
        "a damaged byte anywhere in the journal: the store starts, only the record it hit is lost, the bytes are set aside"
    )
    func everyJournalByte() throws {
        let journal = try #require(Self.base.files[Self.base.journalName])
        let frames = Self.frameStarts(journal)
        #expect(frames.count == 1 + 18)
        try Self.withScratch { scratch in
            for position in 0 ..< journal.count {
                try Self.check(
                    Self.base.journalName, position: position,
                    lostRecord: Self.lostRecord(at: position, frames: frames),
                    in: scratch)
            }
        }
    }

    @Test(
        "a damaged byte anywhere in the snapshot: the store starts, only the session it hit is lost, the bytes are set aside"
    )
    func everySnapshotByte() throws {
        let snapshot = try #require(Self.base.files["snapshot"])
        let frames = Self.frameStarts(snapshot)
        #expect(frames.count == 1 + 4 + 1 && Self.base.snapshotSessions.count == 4)
        try Self.withScratch { scratch in
            for position in 0 ..< snapshot.count {
                // The end record holds no session: losing it loses nothing.
                let lost = Self.lostRecord(at: position, frames: frames).flatMap { $0 < 4 ? $0 : nil }
                try Self.check("snapshot", position: position, lostRecord: lost, in: scratch)
            }
        }
    }

    /// Bytes of a snapshot to damage: in its header record (its generation), in its session record.
    static let snapshotDamage = [DurableRecord.snapshotMagic.count + DurableRecord.frameHeaderSize + 1, 33 + 12]

    @Test(
        "a damaged snapshot beside a leftover journal it already holds: every journal replays, the state is right",
        arguments: snapshotDamage)
    func damagedSnapshotReplaysEveryJournal(position: Int) throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory, menu: Self.menu)
        let id = try first.create()
        _ = try first.apply(.toggle(groupID: "a"), to: id)
        _ = try first.apply(.toggle(groupID: "b"), to: id)
        let oldName = try #require(directory.journalNames.first)
        let oldJournal = try Data(contentsOf: URL(fileURLWithPath: directory.file(oldName)))
        try first.compactNow()
        _ = try first.apply(.toggle(groupID: "a"), to: id)
        _ = try first.apply(.set(groupID: "c", isExpanded: true), to: id)
        first.close()
        // What a crash between the snapshot's rename and the old journal's removal leaves, with
        // the snapshot damaged as well: its generation, or the session's record.
        try oldJournal.write(to: URL(fileURLWithPath: directory.file(oldName)))
        var snapshot = Array(try Data(contentsOf: URL(fileURLWithPath: directory.file("snapshot"))))
        snapshot[position] ^= 0x01
        try Data(snapshot).write(to: URL(fileURLWithPath: directory.file("snapshot")))

        let log = DurableLogRecorder()
        let second = try durableOpen(directory, menu: Self.menu, log: log)
        defer { second.close() }
        #expect(second.recovery.journalFiles == 2)
        var expected = durableExpansion(SessionState(), menu: Self.menu)  // "a" toggled twice: as it was
        expected["b"]!.toggle()
        expected["c"] = true
        #expect(durableExpansion(try second.state(of: id), menu: Self.menu) == expected)
        let record = position < 33 ? 8 : 33
        #expect(
            log.lines.contains {
                $0.contains("snapshot: corrupt record at byte \(record)")
                    && $0.contains("every journal on disk is replayed")
            },
            "\(log.lines)")
    }

    @Test(
        "menu-server (--fsync always) on a journal whose third record's length points past its end keeps every acknowledged toggle"
    )
    func liveServerKeepsTheTogglesAfterADamagedLength() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let (data, arguments) = try durableServerFiles(in: directory, fsync: .always)
        var expected = durableExpansion(SessionState(), menu: Self.menu)
        let server = try LiveChildServer(arguments: arguments)
        let session: String
        do {
            let connection = try LiveRawConnection(port: server.port)
            let created = try connection.request("POST", "/sessions")
            session = try #require(created.header("X-Session-Id"))
            for group in ["a", "b", "c", "ag", "bg", "a", "c"] {
                #expect(
                    try connection.request("POST", "/groups/\(group)/toggle", headers: [("X-Session-Id", session)])
                        .status == 200)
                expected[group]!.toggle()
            }
        }
        _ = server.signalAndWait(SIGKILL, timeoutSeconds: 30)
        let name = try #require(DurableTemporaryDirectory.sizes(in: data).keys.first { $0.hasPrefix("journal-") })
        let journal = data + "/" + name
        let (offsets, _) = try durableRecordOffsets(journal)
        #expect(offsets.count == 8)  // created + 7 toggles
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: journal)))
        bytes[offsets[2] + 2] ^= 0x01  // its length + 65,536: past the end of the file
        try Data(bytes).write(to: URL(fileURLWithPath: journal))

        let restarted = try LiveChildServer(arguments: arguments)
        _ = restarted.signalAndWait(SIGTERM, timeoutSeconds: 30)
        #expect(restarted.termination == .exited(0))
        let stderr = restarted.stderrText.value
        #expect(
            stderr.contains("\(name): corrupt record at byte \(offsets[2]) (record length")
                && stderr.contains("repaired 1 record length")
                && stderr.contains("set aside in \(name).corrupt-"), "\(stderr)")
        let store = try DurableSessionStore(directory: data, menu: Self.menu)
        defer { store.close() }
        #expect(store.recovery.repairs.isEmpty)
        #expect(durableExpansion(try store.state(of: try #require(SessionID(session))), menu: Self.menu) == expected)
    }
}
