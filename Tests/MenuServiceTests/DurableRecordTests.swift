import Testing

@testable import MenuService

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

    @Test("every journal event encodes and decodes to itself")
    func eventsRoundTrip() {
        let id = SessionID.random()
        let events: [DurableRecord.Event] = [
            .created(id), .deleted(id), .touched(id),
            .groupSet(id, group: "main-courses", isExpanded: true), .groupSet(id, group: "宮保", isExpanded: false),
        ]
        var bytes: [UInt8] = []
        for event in events { DurableRecord.append(event, time: 1_700_000_000_123, to: &bytes) }
        var scanner = DurableRecord.Scanner(bytes, from: 0)
        var decoded: [DurableRecord.Event] = []
        while case .record(let payload) = scanner.next() {
            guard let (event, time) = DurableRecord.decodeEvent(payload) else { Issue.record("undecodable"); return }
            #expect(time == 1_700_000_000_123)
            decoded.append(event)
        }
        #expect(decoded == events)
        #expect(scanner.offset == bytes.count)
    }

    @Test("a record cut short at any byte is a torn tail at its start; the records before it stay readable")
    func cutRecordIsATornTail() {
        let id = SessionID.random()
        var bytes: [UInt8] = []
        DurableRecord.append(.created(id), time: 1, to: &bytes)
        let boundary = bytes.count
        DurableRecord.append(.groupSet(id, group: "drinks", isExpanded: true), time: 2, to: &bytes)
        for cut in boundary + 1 ..< bytes.count {
            var scanner = DurableRecord.Scanner(Array(bytes[0 ..< cut]), from: 0)
            guard case .record = scanner.next() else { Issue.record("first record lost at cut \(cut)"); continue }
            guard case .damaged(let damage) = scanner.next() else { Issue.record("no damage at cut \(cut)"); continue }
            #expect(damage.kind == .tornTail && damage.offset == boundary, "cut at \(cut): \(damage)")
        }
    }

    @Test("a flipped byte inside an earlier record is corruption at that record, not a torn tail")
    func flippedByteIsCorruption() {
        let id = SessionID.random()
        var bytes: [UInt8] = []
        DurableRecord.append(.created(id), time: 1, to: &bytes)
        let second = bytes.count
        DurableRecord.append(.groupSet(id, group: "drinks", isExpanded: true), time: 2, to: &bytes)
        DurableRecord.append(.deleted(id), time: 3, to: &bytes)
        for position in second ..< second + 20 {
            var damaged = bytes
            damaged[position] ^= 0x40
            var scanner = DurableRecord.Scanner(damaged, from: 0)
            guard case .record = scanner.next() else { Issue.record("first record lost"); continue }
            guard case .damaged(let damage) = scanner.next() else { Issue.record("flip at \(position) not detected"); continue }
            #expect(damage.offset == second, "flip at \(position): \(damage)")
            // A flipped length byte may make the record look longer than the file: then it reads as torn.
            if position >= second + 4 { #expect(damage.kind == .corrupt, "flip at \(position): \(damage)") }
        }
    }

    @Test("a zero-filled tail (size on disk, data not) is a torn tail")
    func zeroFilledTailIsTorn() {
        var bytes: [UInt8] = []
        DurableRecord.append(.created(SessionID.random()), time: 1, to: &bytes)
        let end = bytes.count
        bytes += [UInt8](repeating: 0, count: 100)
        var scanner = DurableRecord.Scanner(bytes, from: 0)
        _ = scanner.next()
        guard case .damaged(let damage) = scanner.next() else { Issue.record("zeros accepted"); return }
        #expect(damage == DurableRecord.Damage(kind: .tornTail, offset: end, detail: "zero-filled tail"))
    }
}
