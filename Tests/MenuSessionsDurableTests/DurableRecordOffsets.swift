import Foundation
@testable import MenuSessionsDurable
import DurableTestSupport

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
