import Testing

@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

@Suite("Durable: record format")
struct DurableRecordTests {
    @Test("CRC-32C matches the published check value and the RFC 3720 vectors")
    func crc32cMatchesKnownVectors() {
        #expect(CRC32C.checksum([UInt8]()) == 0)
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0 ..< 32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0 ..< 32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
        // Incremental use gives the same value as one pass.
        let text = Array("123456789".utf8)
        #expect(CRC32C.update(CRC32C.checksum(text[0 ..< 4]), text[4...]) == 0xE306_9283)
    }

    private func journal(_ events: [DurableRecord.Event]) -> (bytes: [UInt8], offsets: [Int]) {
        durableJournalFile(events)
    }

    /// Reads a journal file as recovery does; returns what it kept, with the record times.
    private func read(_ bytes: [UInt8]) -> (salvage: DurableSalvage, events: [DurableRecord.Event], times: [Int64]) {
        var events: [DurableRecord.Event] = []
        var times: [Int64] = []
        let salvage = DurableSalvage(
            bytes, magic: DurableRecord.journalMagic, kinds: DurableRecord.journalKinds,
            isRecord: { DurableRecord.decodeEvent($0) != nil },
            consume: { payload in
                guard let (event, time) = DurableRecord.decodeEvent(payload) else { return false }
                events.append(event)
                times.append(time)
                return true
            })
        salvage.checkInvariants()
        return (salvage, events, times)
    }

    @Test("every journal event encodes and decodes to itself")
    func eventsRoundTrip() {
        let id = SessionID.random()
        let events: [DurableRecord.Event] = [
            .created(id), .deleted(id), .touched(id),
            .groupSet(id, group: "main-courses", isExpanded: true), .groupSet(id, group: "宮保", isExpanded: false)
        ]
        let (bytes, _) = journal(events)
        let (salvage, decoded, times) = read(bytes)
        #expect(decoded == events)
        #expect(times == [1, 2, 3, 4, 5])
        #expect(salvage.damage.isEmpty && salvage.generation == 7 && salvage.keptBytes == bytes.count)
    }

    @Test("a record cut short at any byte is a torn tail at its start; the records before it stay readable")
    func cutRecordIsATornTail() {
        let id = SessionID.random()
        let (bytes, offsets) = journal([.created(id), .groupSet(id, group: "drinks", isExpanded: true)])
        for cut in offsets[1] + 1 ..< bytes.count {
            let (salvage, events, _) = read(Array(bytes[0 ..< cut]))
            #expect(events == [.created(id)], "cut at \(cut)")
            #expect(
                salvage.damage == [
                    .init(kind: .tornTail, offset: offsets[1], end: cut, detail: salvage.damage.first?.detail ?? "")
                ],
                "cut at \(cut): \(salvage.damage)")
            #expect(salvage.isIntactBeforeATail)
        }
    }

    @Test(
        "a flipped byte anywhere in a middle record is corruption there: a flipped length is repaired, and the records after it are kept"
    )
    func flippedByteIsCorruption() {
        let id = SessionID.random()
        let events: [DurableRecord.Event] = [
            .created(id), .groupSet(id, group: "drinks", isExpanded: true), .deleted(id)
        ]
        let (bytes, offsets) = journal(events)
        for position in offsets[1] ..< offsets[2] {
            for bit in 0 ..< 8 {
                var damaged = bytes
                damaged[position] ^= 1 << bit
                let (salvage, kept, _) = read(damaged)
                let label = "bit \(bit) of byte \(position): \(salvage.damage)"
                guard salvage.damage.count == 1, let damage = salvage.damage.first else {
                    Issue.record("\(label)")
                    continue
                }
                #expect(damage.kind == .corrupt && damage.offset == offsets[1] && damage.end == offsets[2], "\(label)")
                // The length is the frame's first four bytes: the checksum confirms the right one.
                let isLength = position < offsets[1] + 4
                #expect(damage.lengthRepaired == isLength, "\(label)")
                #expect(kept == (isLength ? events : [events[0], events[2]]), "\(label)")
                #expect(!salvage.isIntactBeforeATail)
            }
        }
    }

    @Test(
        "a flipped length in the last record, pointing past the end of the file, is repaired, not taken for a torn tail"
    )
    func flippedLengthOfTheLastRecordIsRepaired() {
        let id = SessionID.random()
        let events: [DurableRecord.Event] = [.created(id), .groupSet(id, group: "drinks", isExpanded: true)]
        let (bytes, offsets) = journal(events)
        var damaged = bytes
        damaged[offsets[1] + 2] ^= 0x01  // length + 65,536
        let (salvage, kept, _) = read(damaged)
        #expect(kept == events)
        #expect(salvage.repairedLengths == 1 && salvage.droppedBytes == 0 && salvage.damage.first?.kind == .corrupt)
    }

    @Test("a zero-filled tail (size on disk, data not) is a torn tail")
    func zeroFilledTailIsTorn() {
        let (intact, _) = journal([.created(SessionID.random())])
        let (salvage, events, _) = read(intact + [UInt8](repeating: 0, count: 100))
        #expect(events.count == 1)
        #expect(
            salvage.damage == [
                .init(kind: .tornTail, offset: intact.count, end: intact.count + 100, detail: "zero-filled tail")
            ])
    }

    @Test("a snapshot session with more groups than one payload holds is split over records, each within the limit")
    func largeSessionsAreSplit() {
        let id = SessionID.random()
        let groups = (0 ..< 1000).map { (id: "group-\($0)", isExpanded: $0 % 3 == 0) }
        var bytes: [UInt8] = []
        DurableRecord.appendSession(id, lastUsed: 42, groups: groups, to: &bytes, payloadLimit: 1000)
        var offset = 0
        var decoded: [(id: String, isExpanded: Bool)] = []
        var records = 0
        while offset < bytes.count, let payload = DurableRecord.frame(in: bytes, at: offset) {
            #expect(payload.count <= 1000)
            switch DurableRecord.decodeSnapshotItem(payload) {
            case .session(let found, let lastUsed, let first, _)? where records == 0 && found == id && lastUsed == 42:
                decoded += first
            case .moreGroups(let found, let more)? where records > 0 && found == id:
                decoded += more.compactMap {
                    if case .flip(let group, let isExpanded) = $0 { (group, isExpanded) } else { nil }
                }
            default:
                Issue.record("record \(records) is not a part of the session")
            }
            records += 1
            offset = payload.endIndex
        }
        #expect(offset == bytes.count && records >= 13)  // about 13,500 bytes of groups
        #expect(decoded.map(\.id) == groups.map(\.id) && decoded.map(\.isExpanded) == groups.map(\.isExpanded))
    }
}
