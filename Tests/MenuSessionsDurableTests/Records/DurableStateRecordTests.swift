import DurableTestSupport
import Foundation
import MenuModel
import Testing

@testable import MenuSessions
@testable import MenuSessionsDurable

/// The records of whole states (journal `state`/`stateMore`, snapshot `sessionState`): they
/// round-trip, split within the frame limit and replay only whole, and damage to them is
/// salvaged like damage to any other record.
@Suite("Durable: state records")
struct DurableStateRecordTests {
    static let entries: [DurableRecord.StateEntry] = [
        .mark("b", mode: .expanded), .mark("宮保", mode: .collapsed), .mark("d", mode: .default),
        .flip("a", isExpanded: false), .flip("ag", isExpanded: true)
    ]

    static func journal(_ events: [DurableRecord.Event]) -> (bytes: [UInt8], offsets: [Int]) {
        durableJournalFile(events, generation: 3)
    }

    /// The events a journal reading keeps, as recovery reads it.
    static func kept(_ bytes: [UInt8]) -> (salvage: DurableSalvage, events: [DurableRecord.Event]) {
        var events: [DurableRecord.Event] = []
        let salvage = DurableSalvage(
            bytes, magic: DurableRecord.journalMagic, kinds: DurableRecord.journalKinds,
            isRecord: { DurableRecord.decodeEvent($0) != nil },
            consume: { payload in
                guard let (event, _) = DurableRecord.decodeEvent(payload) else { return false }
                events.append(event)
                return true
            })
        salvage.checkInvariants()
        return (salvage, events)
    }

    @Test(
        "state records of every mode, marks and flips, encode and decode to themselves; an empty expand-all state is 50 bytes framed"
    )
    func stateRecordsRoundTrip() throws {
        let id = SessionID.random()
        let events: [DurableRecord.Event] =
            ExpansionMode.allCases.map {
                .state(id, revision: 7, base: $0, total: Self.entries.count + 1, entries: Self.entries)
            } + [
                .stateMore(id, entries: [.flip("c", isExpanded: true)]),
                .state(id, revision: 0, base: .collapsed, total: 0, entries: [])
            ]
        let (bytes, offsets) = Self.journal(events)
        #expect(Self.kept(bytes).events == events)
        #expect(bytes.count - offsets.last! == 50)
        // A snapshot session with a base and marks, and more entries after it.
        var snapshot: [UInt8] = []
        let state = PortableState(
            base: .expanded, marks: [.init(id: "b", mode: .collapsed)],
            flips: (0 ..< 40).map { .init(id: "group-\($0)", isExpanded: $0 % 2 == 0) })
        DurableRecord.appendSession(id, lastUsed: 9, state: state, revision: 4, to: &snapshot, payloadLimit: 200)
        var offset = 0
        var saved: DurableRecovery.SavedSession?
        while offset < snapshot.count, let payload = DurableRecord.frame(in: snapshot, at: offset) {
            #expect(payload.count <= 200)
            switch DurableRecord.decodeSnapshotItem(payload) {
            case .sessionState(let found, 9, 4, let base, let entries)? where saved == nil && found == id:
                saved = DurableRecovery.SavedSession(lastUsed: 9, revision: 4, base: base, entries: entries)
            case .moreGroups(let found, let entries)? where saved != nil && found == id:
                saved!.add(entries)
            default:
                Issue.record("record at \(offset) is not a part of the session")
            }
            offset = payload.endIndex
        }
        #expect(offset == snapshot.count && saved?.portable == state)
    }

    @Test(
        "a state past the payload limit is split over parts within it, and replay installs it only once every part is read"
    )
    func splitStatesReplayOnlyWhole() throws {
        let id = SessionID.random()
        let state = PortableState(
            base: .collapsed, marks: [.init(id: "m", mode: .expanded)],
            flips: (0 ..< 30).map { .init(id: "group-\($0)", isExpanded: true) })
        let parts = DurableRecord.stateEvents(of: id, state, revision: 5, payloadLimit: 120)
        #expect(parts.count >= 4)
        for part in parts {
            var bytes: [UInt8] = []
            DurableRecord.append(part, time: 1, to: &bytes)
            #expect(bytes.count - DurableRecord.frameHeaderSize <= 120)
        }
        func replay(dropping lost: Int?) -> DurableRecovery.SavedSession? {
            var replay = DurableRecovery.Replay(directory: "/nonexistent", log: { _ in })
            replay.apply(.created(id), time: 1)
            replay.apply(.groupSet(id, group: "before", isExpanded: true, revision: 1), time: 2)
            for (index, part) in parts.enumerated() where index != lost { replay.apply(part, time: 3) }
            replay.apply(.groupSet(id, group: "after", isExpanded: false, revision: 6), time: 4)
            return replay.sessions[id]
        }
        let whole = try #require(replay(dropping: nil))
        #expect(
            whole.portable
                == PortableState(
                    base: .collapsed, marks: state.marks, flips: state.flips + [.init(id: "after", isExpanded: false)]))
        #expect(whole.revision == 6)
        for lost in parts.indices {
            // The state before the lost write, and the set after it on top.
            let partial = try #require(replay(dropping: lost))
            #expect(
                partial.portable
                    == PortableState(flips: [
                        .init(id: "before", isExpanded: true), .init(id: "after", isExpanded: false)
                    ]),
                "part \(lost) lost")
        }
    }

    @Test(
        "a damaged byte anywhere in the record before a state record costs only that record: the state and its part after are kept"
    )
    func damageBeforeAStateRecordKeepsIt() {
        let id = SessionID.random()
        let events: [DurableRecord.Event] = [
            .created(id), .groupSet(id, group: "drinks", isExpanded: true, revision: 1),
            .state(id, revision: 2, base: .expanded, total: 2, entries: [.mark("b", mode: .collapsed)]),
            .stateMore(id, entries: [.flip("c", isExpanded: false)]), .deleted(id)
        ]
        let (bytes, offsets) = Self.journal(events)
        for record in [1, 2] {
            for position in offsets[record] + 4 ..< offsets[record + 1] {
                var damaged = bytes
                damaged[position] ^= 0x20
                let (salvage, kept) = Self.kept(damaged)
                var expected = events
                expected.remove(at: record)
                #expect(
                    kept == expected && salvage.damage.count == 1 && salvage.damage[0].offset == offsets[record],
                    "byte \(position) of record \(record): \(salvage.damage)")
            }
        }
    }

    @Test(
        "a damaged or torn expand-all record in the journal: the store starts with the session as it was before it, at its revision"
    )
    func aDamagedBulkRecordLeavesTheStateBefore() throws {
        let menu = DurableFixtures.menu()
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory, menu: menu)
        let id = try first.create()
        let before = try first.apply(.toggle(groupID: "b"), to: id)
        _ = try first.apply(.setAll(.expanded), to: id)
        first.close()
        let journal = directory.file(try #require(directory.journalNames.last))
        let (offsets, size) = try durableRecordOffsets(journal)
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: journal)))
        #expect(offsets.count == 3 && size - offsets[2] == 50)
        for (label, bytes) in [
            (
                "damaged",
                {
                    var b = original
                    b[offsets[2] + 30] ^= 0x04
                    return b
                }()
            ),
            ("torn", Array(original[..<(offsets[2] + 20)]))
        ] {
            try Data(bytes).write(to: URL(fileURLWithPath: journal))
            let store = try durableOpen(directory, menu: menu)
            #expect(try store.snapshot(of: id) == SessionSnapshot(state: before.state, revision: 1), "\(label)")
            #expect(store.recovery.repairs.count == 1, "\(label)")
            store.close()
        }
    }

    @Test("a snapshot of the kinds written before states (session, sessionAtRevision, sessionGroups) loads as before")
    func olderSnapshotKindsLoadAsBefore() throws {
        let menu = DurableFixtures.menu()
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let (plain, revised) = (SessionID.random(), SessionID.random())
        var bytes: [UInt8] = []
        let now = DurableSessionStore.milliseconds()
        DurableRecord.appendFileHeader(to: &bytes, magic: DurableRecord.snapshotMagic, generation: 1, time: now)
        DurableRecord.appendSession(plain, lastUsed: now, groups: [("c", true)], to: &bytes)
        DurableRecord.appendSession(
            revised, lastUsed: now, groups: [("a", false), ("b", true), ("zz", true)], revision: 3, to: &bytes,
            payloadLimit: 45)
        DurableRecord.appendSnapshotEnd(sessionCount: 2, to: &bytes)
        let (frames, end) = durablePayloads(bytes)
        #expect(frames.count > 4 && end == bytes.count)  // the header, the end and at least three session records
        try Data(bytes).write(to: URL(fileURLWithPath: directory.file("snapshot")))
        let store = try durableOpen(directory, menu: menu)
        defer { store.close() }
        var expected = durableExpansion(SessionState(), menu: menu)
        expected["c"] = true
        #expect(durableExpansion(try store.state(of: plain), menu: menu) == expected)
        #expect(try store.snapshot(of: plain).revision == 0)
        expected = durableExpansion(SessionState(), menu: menu)
        expected["a"] = false
        expected["b"] = true
        #expect(durableExpansion(try store.state(of: revised), menu: menu) == expected)
        #expect(try store.snapshot(of: revised).revision == 3)
        #expect(store.recovery.skippedGroupChanges == 1 && store.recovery.repairs.isEmpty)
    }
}
