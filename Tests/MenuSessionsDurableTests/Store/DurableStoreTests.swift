import DurableTestSupport
import Foundation
import MenuModel
import NaiveReference
import Synchronization
import Testing

@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Durable: session store on disk")
struct DurableStoreTests {
    /// Applies a mixed, seeded workload and returns every group's expansion each session must
    /// hold, computed from the commands alone (a toggle flips a group, a set sets it), never read
    /// back from the store.
    private func workload(_ store: DurableSessionStore, sessions: Int, changes: Int, seed: UInt64)
        throws -> [SessionID: [String: Bool]]
    {
        let defaults = durableExpansion(SessionState())
        var random = SplitMix64(state: seed)
        var expected: [SessionID: [String: Bool]] = [:]
        var ids: [SessionID] = []
        for _ in 0 ..< sessions {
            let id = try store.create()
            ids.append(id)
            expected[id] = defaults
        }
        for _ in 0 ..< changes {
            let id = ids[Int(random.next() % UInt64(ids.count))]
            let group = DurableFixtures.groups[Int(random.next() % UInt64(DurableFixtures.groups.count))]
            if random.next() % 2 == 0 {
                _ = try store.apply(.toggle(groupID: group), to: id)
                expected[id]![group]!.toggle()
            } else {
                let isExpanded = random.next() % 2 == 0
                _ = try store.apply(.set(groupID: group, isExpanded: isExpanded), to: id)
                expected[id]![group] = isExpanded
            }
        }
        // A session made by a write without one, then changed again.
        let made = try store.apply(.toggle(groupID: "c"), to: nil).sessionID
        _ = try store.apply(.toggle(groupID: "ag"), to: made)
        expected[made] = defaults.merging(["c": !defaults["c"]!, "ag": !defaults["ag"]!]) { $1 }
        return expected
    }

    @Test("a new store on the same directory restores every session and its state")
    func restartRestoresEverySession() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        let expected = try workload(first, sessions: 40, changes: 600, seed: 1)
        for (id, groups) in expected { #expect(durableExpansion(try first.state(of: id)) == groups) }
        first.close()

        let second = try durableOpen(directory)
        defer { second.close() }
        #expect(second.count == expected.count)
        #expect(second.recovery.sessions == expected.count)
        #expect(second.recovery.repairs.isEmpty)
        for (id, groups) in expected {
            #expect(durableExpansion(try second.state(of: id)) == groups)
        }
    }

    @Test("deleted sessions stay deleted after a restart, with or without a compaction in between")
    func deletedSessionsStayDeleted() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        let kept = try first.create()
        let gone = try first.create()
        let goneLater = try first.create()
        _ = try first.apply(.toggle(groupID: "b"), to: gone)
        try first.delete(gone)
        try first.compactNow()
        try first.delete(goneLater)
        first.close()

        let second = try durableOpen(directory)
        defer { second.close() }
        #expect(second.count == 1)
        #expect(try second.state(of: kept) == SessionState())
        #expect(durableError { try second.state(of: gone) } == .unknownSession)
        #expect(durableError { try second.state(of: goneLater) } == .unknownSession)
    }

    @Test("a torn tail is reported, truncated away, and every record before it is kept")
    func tornTailIsTruncated() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        let expected = try workload(first, sessions: 5, changes: 50, seed: 2)
        first.close()
        let journal = directory.file(try #require(directory.journalNames.last))
        let intactSize = try durableRecordOffsets(journal).size
        // Half of a real record, as a crash in the middle of write(2) would leave it.
        var record: [UInt8] = []
        DurableRecord.append(.groupSet(expected.keys.first!, group: "a", isExpanded: false), time: 1, to: &record)
        let handle = try #require(FileHandle(forWritingAtPath: journal))
        handle.seekToEndOfFile()
        handle.write(Data(record[0 ..< record.count / 2]))
        try handle.close()

        let log = DurableLogRecorder()
        let second = try durableOpen(directory, log: log)
        #expect(second.recovery.repairs.count == 1)
        let repair = try #require(second.recovery.repairs.first)
        #expect(repair.kind == "torn tail" && repair.offset == intactSize && repair.droppedBytes == record.count / 2)
        #expect(directory.fileSizes[repair.savedAs] == record.count / 2)
        #expect(log.lines.contains { $0.contains("torn tail at byte \(intactSize)") }, "\(log.lines)")
        #expect(try durableRecordOffsets(journal).size == intactSize)
        for (id, groups) in expected { #expect(durableExpansion(try second.state(of: id)) == groups) }
        // The repaired journal takes new records, and the next start finds nothing to repair.
        let later = try second.create()
        second.close()
        let third = try durableOpen(directory)
        defer { third.close() }
        #expect(third.recovery.repairs.isEmpty)
        #expect(try third.state(of: later) == SessionState())
    }

    @Test(
        "a corrupt record in the middle: only it is lost, the records around it replay, its bytes are set aside, the store starts"
    )
    func corruptRecordInTheMiddle() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        let id = try first.create()
        var history: [SessionState] = []  // the state after each journaled change
        for group in ["a", "b", "c", "ag", "bg", "a", "c", "b"] {
            history.append(try first.apply(.toggle(groupID: group), to: id).state)
        }
        first.close()
        let journal = directory.file(try #require(directory.journalNames.last))
        let (offsets, size) = try durableRecordOffsets(journal)
        #expect(offsets.count == 9)  // created + 8 changes
        // Flip one byte inside the 6th change (record 7, the second toggle of "a").
        let bad = offsets[6]
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: journal)))
        var bytes = original
        bytes[bad + 12] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: journal))

        let log = DurableLogRecorder()
        let second = try durableOpen(directory, log: log)
        defer { second.close() }
        let repair = try #require(second.recovery.repairs.first)
        #expect(repair.kind == "corrupt record" && repair.offset == bad && repair.droppedBytes == offsets[7] - bad)
        #expect(repair.keptRecords == 8 && repair.droppedRanges == 1)
        // Every change but the lost one: "a" as the first toggle left it, the rest as at the end.
        var expected = durableExpansion(history[7])
        expected["a"] = durableExpansion(history[4])["a"]
        #expect(durableExpansion(try second.state(of: id)) == expected)
        // Set aside from the damaged byte on, exactly as it was; then replaced by a fresh snapshot.
        let saved = try Data(contentsOf: URL(fileURLWithPath: directory.file(repair.savedAs)))
        #expect(Array(saved) == Array(bytes[bad...]) && saved.count == size - bad)
        #expect(directory.fileSizes["snapshot"] != nil && !directory.journalNames.contains(journal))
        #expect(
            log.lines.contains { $0.contains("corrupt record at byte \(bad)") && $0.contains(repair.savedAs) },
            "\(log.lines)")
        // The store serves and journals again.
        #expect(try second.apply(.toggle(groupID: "c"), to: id).state != history[7])
    }

    @Test(
        "a damaged snapshot: sessions before the damage and later journal records survive, the file is kept aside, a fresh snapshot is written"
    )
    func damagedSnapshot() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        let ids = try (0 ..< 20).map { _ in try first.create() }
        for id in ids { _ = try first.apply(.set(groupID: "c", isExpanded: true), to: id) }
        try first.compactNow()
        let later = try first.create()  // only in the journal
        first.close()
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: directory.file("snapshot"))))
        let size = bytes.count
        bytes[size - 40] ^= 0x10  // inside the last session record (43 bytes, then the 17-byte end record)
        try Data(bytes).write(to: URL(fileURLWithPath: directory.file("snapshot")))

        let log = DurableLogRecorder()
        let second = try durableOpen(directory, log: log)
        let repair = try #require(second.recovery.repairs.first)
        #expect(repair.file == "snapshot" && repair.kind == "corrupt record")
        #expect(second.count == 20)  // 19 from the snapshot, 1 from the journal
        #expect(try second.state(of: later) == SessionState())
        #expect(directory.fileSizes[repair.savedAs] == size)
        #expect(
            log.lines.contains {
                $0.contains("snapshot: corrupt record") && $0.contains("19 sessions kept of the 20 it lists")
            },
            "\(log.lines)")
        second.close()
        let third = try durableOpen(directory)
        defer { third.close() }
        #expect(third.recovery.repairs.isEmpty && third.count == 20)
    }

    @Test("compaction bounds the files by the live state: 20,000 toggles on 3 sessions, then a restart")
    func compactionBoundsFileSize() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let minimum: Int64 = 16 << 10
        let first = try durableOpen(directory, compactionMinimumBytes: minimum)
        let ids = try (0 ..< 3).map { _ in try first.create() }
        var expected = [[String: Bool]](repeating: durableExpansion(SessionState()), count: 3)  // from the toggles alone
        var largest = 0
        for step in 1 ... 20_000 {
            let group = DurableFixtures.groups[(step / 3) % DurableFixtures.groups.count]
            _ = try first.apply(.toggle(groupID: group), to: ids[step % 3])
            expected[step % 3][group]!.toggle()
            if step % 500 == 0 {
                // Compaction runs beside the writers; once it has caught up, the files hold one
                // small snapshot and a journal of at most max(minimum, what came in meanwhile:
                // 500 toggles here).
                first.waitForCompaction()
                largest = max(largest, directory.fileSizes.values.reduce(0, +))
            }
        }
        #expect(try ids.map { try durableExpansion(first.state(of: $0)) } == expected)
        first.close()
        // About 36 bytes a toggle: 700 KB of history, against files of at most 32 KiB.
        #expect(largest <= 2 * Int(minimum), "largest \(largest)")
        #expect(directory.journalNames.count == 1)
        #expect(directory.fileSizes["snapshot"] != nil)

        let second = try durableOpen(directory)
        defer { second.close() }
        #expect(try ids.map { try durableExpansion(second.state(of: $0)) } == expected)
        // Only what came after the last compaction is replayed: a journal is compacted once it
        // passes `minimum` bytes, and a toggle record is 35 or 36 bytes (8 frame, 1 kind, 8 time,
        // 16 session, 1 state, a 1-2 byte group id), so at most minimum / 35 = 468 of the 20,000
        // toggles remain, plus a touch record for each of the three reads above.
        #expect(second.recovery.journalRecords <= Int(minimum) / 35 + 3, "\(second.recovery.journalRecords) records")
    }

    @Test("writes during compaction are not lost: 4 threads on shared sessions, compacting all along")
    func concurrentWritesDuringCompaction() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let store = try durableOpen(directory, compactionMinimumBytes: 4 << 10)
        let ids = try (0 ..< 8).map { _ in try store.create() }
        // Toggles commute: what a group must show is its default flipped once per acknowledged
        // toggle, whatever the order the threads ran in. Each worker counts its own.
        let counts = Mutex<[SessionID: [String: Int]]>([:])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 5) { worker in
            guard worker < 4 else {
                // Beside the automatic compactions: twenty more, whatever the writers' speed.
                for _ in 0 ..< 20 {
                    do { try store.compactNow() } catch { failures.withLock { $0.append("compaction: \(error)") } }
                }
                return
            }
            var random = SplitMix64(state: UInt64(worker + 10))
            var mine: [SessionID: [String: Int]] = [:]
            for _ in 0 ..< 3000 {
                let id = ids[Int(random.next() % 8)]
                let group = DurableFixtures.groups[Int(random.next() % 5)]
                do {
                    _ = try store.apply(.toggle(groupID: group), to: id)
                    mine[id, default: [:]][group, default: 0] += 1
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            counts.withLock { all in
                for (id, groups) in mine { all[id, default: [:]].merge(groups, uniquingKeysWith: +) }
            }
        }
        store.waitForCompaction()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        let defaults = durableExpansion(SessionState())
        let expected: [[String: Bool]] = counts.withLock { counts in
            ids.map { id in
                var groups = defaults
                for (group, count) in counts[id, default: [:]] where count % 2 == 1 { groups[group]!.toggle() }
                return groups
            }
        }
        let toggled = counts.withLock { $0.values.reduce(0) { $0 + $1.values.reduce(0, +) } }
        #expect(toggled == 4 * 3000)
        #expect(store.journal.generation >= 20, "generation \(store.journal.generation)")
        let live = try ids.map { try durableExpansion(store.state(of: $0)) }
        store.close()
        #expect(directory.fileSizes["snapshot"] != nil)

        let reopened = try durableOpen(directory)
        defer { reopened.close() }
        #expect(reopened.recovery.repairs.isEmpty)
        let restored = try ids.map { try durableExpansion(reopened.state(of: $0)) }
        #expect(live == expected)
        #expect(restored == expected)
    }

    @Test("a crash between the journal switch and the snapshot loses nothing: both journals replay")
    func crashBetweenSwitchAndSnapshot() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        let id = try first.create()
        _ = try first.apply(.toggle(groupID: "a"), to: id)
        // The first half of a compaction, then "crash": no snapshot is written.
        let (file, header) = try DurableJournal.createFile(in: directory.path, generation: 1, time: 0)
        _ = first.journal.beginGeneration(file, generation: 1, headerBytes: header)
        _ = try first.apply(.toggle(groupID: "b"), to: id)
        first.close()
        #expect(directory.journalNames.count == 2)

        let second = try durableOpen(directory)
        defer { second.close() }
        #expect(second.recovery.journalFiles == 2)
        var expected = durableExpansion(SessionState())  // one toggle in each journal
        expected["a"]!.toggle()
        expected["b"]!.toggle()
        #expect(durableExpansion(try second.state(of: id)) == expected)
    }

    @Test("sessions idle longer than the time to live are not resurrected by replay")
    func expiredSessionsAreNotResurrected() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let clock = DurableTestClock()
        let first = try durableOpen(directory, timeToLive: .seconds(100), clock: clock)
        let old = try first.create()
        clock.advance(.seconds(60))
        let young = try first.create()
        first.close()

        clock.advance(.seconds(50))  // old: idle 110 s, young: 50 s
        let second = try durableOpen(directory, timeToLive: .seconds(100), clock: clock)
        #expect(second.recovery.expiredSessions == 1)
        #expect(durableError { try second.state(of: old) } == .unknownSession)
        #expect(try second.state(of: young) == SessionState())
        try second.compactNow()  // the expired session is not written back either
        second.close()
        let third = try durableOpen(directory, timeToLive: .seconds(100), clock: clock)
        defer { third.close() }
        #expect(third.count == 1)
    }

    @Test("reads keep a session alive across a restart (journaled at most every 1/16 of the time to live)")
    func readsKeepSessionsAlive() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let clock = DurableTestClock()
        let first = try durableOpen(directory, timeToLive: .seconds(160), clock: clock)
        let read = try first.create()
        let unread = try first.create()
        clock.advance(.seconds(100))
        _ = try first.state(of: read)
        first.close()

        clock.advance(.seconds(100))  // read: idle 100 s, unread: 200 s
        let second = try durableOpen(directory, timeToLive: .seconds(160), clock: clock)
        defer { second.close() }
        #expect(try second.state(of: read) == SessionState())
        #expect(durableError { try second.state(of: unread) } == .unknownSession)
    }

    @Test("saved changes naming groups the menu no longer has are skipped with a warning")
    func unknownGroupsAreSkipped() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        let id = try first.create()
        _ = try first.apply(.set(groupID: "c", isExpanded: true), to: id)
        _ = try first.apply(.set(groupID: "b", isExpanded: true), to: id)
        first.close()

        // The new menu no longer has group c.
        let changed = DurableFixtures.menu(
            DurableFixtures.menuJSON.replacingOccurrences(
                of: #"{"id": "c", "title": "C", "items": [{"id": "c1", "title": "C1"}]},"#, with: ""))
        let log = DurableLogRecorder()
        let second = try durableOpen(directory, menu: changed, log: log)
        defer { second.close() }
        #expect(second.recovery.skippedGroupChanges == 1)
        #expect(log.lines.contains { $0.contains("\"c\"") && $0.contains("skipped") }, "\(log.lines)")
        #expect(durableExpansion(try second.state(of: id), menu: changed)["b"] == true)
    }

    @Test("a leftover temporary snapshot is ignored and removed")
    func leftoverTemporarySnapshotIsIgnored() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        let id = try first.create()
        first.close()
        try Data("half a snapshot".utf8).write(to: URL(fileURLWithPath: directory.file("snapshot.tmp")))

        let second = try durableOpen(directory)
        defer { second.close() }
        #expect(try second.state(of: id) == SessionState())
        #expect(directory.fileSizes["snapshot.tmp"] == nil)
    }

    @Test("a second store on a directory in use is refused")
    func secondStoreIsRefused() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        defer { first.close() }
        #expect(throws: DurableStoreError.self) { try durableOpen(directory) }
    }

    @Test("the directory lock is given up when its file is let go, even while a forked child still shares it")
    func directoryLockIsReleasedDespiteAnInheritedDescriptor() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("lock")
        var inherited: Int32 = -1
        do {
            let first = try DurableFile.open(path, O_RDWR | O_CREAT)
            #expect(try first.tryLockExclusive())
            // What a child forked by another thread holds until it execs: the same open file.
            inherited = dup(first.descriptor)
        }
        defer { close(inherited) }
        let second = try DurableFile.open(path, O_RDWR | O_CREAT)
        #expect(try second.tryLockExclusive())
    }

    @Test("start-up on a regular file, or under a missing parent, is a clear error naming the path")
    func startupOnABadPathFails() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("plain")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        for (path, reason) in [(file, "not a directory"), (directory.file("missing/data"), "does not exist")] {
            do {
                _ = try DurableSessionStore(directory: path, menu: DurableFixtures.menu())
                Issue.record("opened \(path)")
            } catch {
                #expect(
                    error.description.contains("cannot use data directory \(path)")
                        && error.description.contains(reason),
                    "\(error)")
            }
        }
    }
}
