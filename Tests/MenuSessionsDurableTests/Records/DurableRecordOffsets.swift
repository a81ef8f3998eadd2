import DurableTestSupport
import Foundation

@testable import MenuSessionsDurable

/// Byte offsets of the records of a journal file (its header record excluded), up to the first
/// frame that does not validate, and the file's size.
func durableRecordOffsets(_ path: String) throws -> (offsets: [Int], size: Int) {
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    guard let header = DurableRecord.frame(in: bytes, at: DurableRecord.journalMagic.count) else {
        throw DurableTestError("no journal header in \(path)")
    }
    var offsets: [Int] = []
    var offset = header.endIndex
    while let frame = DurableRecord.frame(in: bytes, at: offset) {
        offsets.append(offset)
        offset = frame.endIndex
    }
    return (offsets, bytes.count)
}

/// A journal file of generation `generation`: magic, header, then `events` at times 1, 2, 3...;
/// and each event record's offset.
func durableJournalFile(_ events: [DurableRecord.Event], generation: UInt64 = 7) -> (bytes: [UInt8], offsets: [Int]) {
    var bytes: [UInt8] = []
    DurableRecord.appendFileHeader(to: &bytes, magic: DurableRecord.journalMagic, generation: generation, time: 0)
    var offsets: [Int] = []
    for (index, event) in events.enumerated() {
        offsets.append(bytes.count)
        DurableRecord.append(event, time: Int64(index + 1), to: &bytes)
    }
    return (bytes, offsets)
}

/// The payloads of a file's records after its magic (its header's included), up to the first
/// frame that does not validate, and where that reading stopped.
func durablePayloads(_ bytes: [UInt8]) -> (payloads: [ArraySlice<UInt8>], end: Int) {
    var payloads: [ArraySlice<UInt8>] = []
    var offset = DurableRecord.journalMagic.count
    while let payload = DurableRecord.frame(in: bytes, at: offset) {
        payloads.append(payload)
        offset = payload.endIndex
    }
    return (payloads, offset)
}
