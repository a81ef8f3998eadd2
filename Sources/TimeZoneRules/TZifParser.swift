/// The part of a TZif file (RFC 8536) that offsets need: the transition table of the 64-bit data
/// block (the 32-bit one for version 1) and the footer's rules. Leap second records are skipped.
///
/// Invariant: `offsets` is not empty, `times` ascend strictly, and `types` has one valid index
/// into `offsets` per time. Every count is checked against the bytes before anything is read.
struct TZifData {
    var times: [Int64] = []
    var types: [Int] = []
    var offsets: [Int] = []
    var footer: PosixTimeZone?

    init(parsing bytes: [UInt8], name: String) throws(ZoneRulesError) {
        var reader = ByteReader(bytes: bytes, name: name)
        let first = try Header(&reader)
        guard first.version != 0 else {
            try readBlock(&reader, first, timeSize: 4)
            return
        }
        try reader.skip(first.blockSize(timeSize: 4), "the version 1 data block")
        let second = try Header(&reader)
        try readBlock(&reader, second, timeSize: 8)
        guard try reader.integer(1, "the footer") == 0x0A, let end = bytes[reader.position...].firstIndex(of: 0x0A)
        else { throw .malformed(name: name, detail: "the footer is not a line between two newlines") }
        let text = bytes[reader.position ..< end]
        footer = text.isEmpty ? nil : try PosixTimeZone(parsing: Array(text), name: name)
    }

    private mutating func readBlock(_ reader: inout ByteReader, _ header: Header, timeSize: Int) throws(ZoneRulesError)
    {
        guard header.blockSize(timeSize: timeSize) <= reader.remaining else {
            throw .malformed(
                name: reader.name, detail: "its counts describe more data than the \(reader.bytes.count) bytes")
        }
        guard header.typecnt > 0 else { throw .malformed(name: reader.name, detail: "it has no local time type") }
        for _ in 0 ..< header.timecnt {
            let time = try reader.signed(timeSize, "a transition time")
            if let last = times.last, time <= last {
                throw .malformed(name: reader.name, detail: "its transition times do not ascend")
            }
            times.append(time)
        }
        for _ in 0 ..< header.timecnt {
            let type = try Int(reader.integer(1, "a transition type"))
            guard type < header.typecnt else {
                throw .malformed(name: reader.name, detail: "a transition names type \(type) of \(header.typecnt)")
            }
            types.append(type)
        }
        for _ in 0 ..< header.typecnt {
            offsets.append(Int(try reader.signed(4, "a local time type")))
            try reader.skip(2, "a local time type")  // isdst and the designation index: not needed for offsets
        }
        try reader.skip(header.charcnt + header.leapcnt * (timeSize + 4) + header.isstdcnt + header.isutcnt, "the rest")
    }
}

/// A TZif header: magic, version, reserved bytes and the six counts.
private struct Header {
    let version: UInt8
    let isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt: Int

    init(_ reader: inout ByteReader) throws(ZoneRulesError) {
        guard try reader.integer(4, "the header") == 0x545A_6966 else {  // "TZif"
            throw .malformed(name: reader.name, detail: "it does not start with \"TZif\"")
        }
        version = UInt8(truncatingIfNeeded: try reader.integer(1, "the header"))
        guard version == 0 || (UInt8(ascii: "2") ... UInt8(ascii: "4")).contains(version) else {
            throw .malformed(name: reader.name, detail: "its version byte \(version) is not 0, '2', '3' or '4'")
        }
        try reader.skip(15, "the header")
        var counts: [Int] = []
        for _ in 0 ..< 6 { counts.append(Int(try reader.integer(4, "the header"))) }
        (isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt) = (
            counts[0], counts[1], counts[2], counts[3], counts[4], counts[5]
        )
    }

    /// The bytes of the data block after this header (counts are at most 2^32 - 1: no overflow).
    func blockSize(timeSize: Int) -> Int {
        timecnt * (timeSize + 1) + typecnt * 6 + charcnt + leapcnt * (timeSize + 4) + isstdcnt + isutcnt
    }
}

/// A cursor over untrusted bytes: every read checks the bounds and throws instead of trapping.
private struct ByteReader {
    let bytes: [UInt8]
    let name: String
    var position = 0

    var remaining: Int { bytes.count - position }

    mutating func skip(_ count: Int, _ what: String) throws(ZoneRulesError) {
        guard count <= remaining else {
            throw .malformed(name: name, detail: "it ends at byte \(bytes.count), inside \(what)")
        }
        position += count
    }

    /// A big-endian unsigned integer of `width` bytes (1 to 8).
    mutating func integer(_ width: Int, _ what: String) throws(ZoneRulesError) -> UInt64 {
        let start = position
        try skip(width, what)
        return bytes[start ..< position].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A big-endian two's complement integer of 4 or 8 bytes.
    mutating func signed(_ width: Int, _ what: String) throws(ZoneRulesError) -> Int64 {
        let value = try integer(width, what)
        return width == 4 ? Int64(Int32(truncatingIfNeeded: value)) : Int64(bitPattern: value)
    }
}
