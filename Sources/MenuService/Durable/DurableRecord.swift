/// The on-disk format shared by the journal and the snapshot.
///
/// A file is an 8-byte magic followed by framed records. A frame is
/// `u32 payload length | u32 CRC-32C of (length bytes ++ payload) | payload`, little-endian, and
/// a payload starts with a ``Kind`` byte. A file is valid up to its first frame that is
/// incomplete, has an impossible length or a checksum mismatch; what follows is never trusted.
enum DurableRecord {
    static let journalMagic = Array("MENUJRN1".utf8)
    static let snapshotMagic = Array("MENUSNP1".utf8)
    static let frameHeaderSize = 8
    /// Larger lengths are damage: no payload this store writes comes near it.
    static let maxPayload = 64 << 20

    enum Kind: UInt8 {
        /// First record of every file: `u64 generation | i64 time`.
        case fileHeader = 0x01
        /// Journal: `i64 time | id`.
        case created = 0x10
        case deleted = 0x11
        /// Journal: `i64 time | id | u8 isExpanded | group id (UTF-8, rest of payload)`.
        case groupSet = 0x12
        /// Journal: the session was used (read) at `time`; keeps its idle time across restarts.
        case touched = 0x13
        /// Snapshot: `i64 last used | id | u32 n | n × (u8 isExpanded | u32 length | group id)`.
        case session = 0x20
        /// Snapshot, last record: `u64 session count`.
        case snapshotEnd = 0x21
    }

    /// A change as the journal keeps it: resolved (a toggle is journaled as the state it set) and
    /// by group id, never by position, so a journal replays onto a changed menu.
    enum Event: Equatable {
        case created(SessionID)
        case deleted(SessionID)
        case groupSet(SessionID, group: String, isExpanded: Bool)
        case touched(SessionID)

        var session: SessionID {
            switch self {
            case .created(let id), .deleted(let id), .groupSet(let id, _, _), .touched(let id): id
            }
        }
    }

    // MARK: Writing

    /// Appends one frame whose payload `build` writes.
    static func appendFrame(to bytes: inout [UInt8], _ build: (inout [UInt8]) -> Void) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: frameHeaderSize))
        build(&bytes)
        let length = UInt32(bytes.count - start - frameHeaderSize)
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: length.littleEndian, toByteOffset: start, as: UInt32.self)
        }
        let crc = CRC32C.update(CRC32C.checksum(bytes[start ..< start + 4]), bytes[(start + frameHeaderSize)...])
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: crc.littleEndian, toByteOffset: start + 4, as: UInt32.self)
        }
    }

    static func appendFileHeader(to bytes: inout [UInt8], magic: [UInt8], generation: UInt64, time: Int64) {
        bytes.append(contentsOf: magic)
        appendFrame(to: &bytes) { payload in
            payload.append(Kind.fileHeader.rawValue)
            payload.appendLittleEndian(generation)
            payload.appendLittleEndian(UInt64(bitPattern: time))
        }
    }

    static func append(_ event: Event, time: Int64, to bytes: inout [UInt8]) {
        appendFrame(to: &bytes) { payload in
            switch event {
            case .created: payload.append(Kind.created.rawValue)
            case .deleted: payload.append(Kind.deleted.rawValue)
            case .groupSet: payload.append(Kind.groupSet.rawValue)
            case .touched: payload.append(Kind.touched.rawValue)
            }
            payload.appendLittleEndian(UInt64(bitPattern: time))
            payload.append(event.session)
            if case .groupSet(_, let group, let isExpanded) = event {
                payload.append(isExpanded ? 1 : 0)
                payload.append(contentsOf: group.utf8)
            }
        }
    }

    static func appendSession(_ id: SessionID, lastUsed: Int64, groups: [(id: String, isExpanded: Bool)],
                              to bytes: inout [UInt8]) {
        appendFrame(to: &bytes) { payload in
            payload.append(Kind.session.rawValue)
            payload.appendLittleEndian(UInt64(bitPattern: lastUsed))
            payload.append(id)
            payload.appendLittleEndian(UInt32(groups.count))
            for group in groups {
                payload.append(group.isExpanded ? 1 : 0)
                payload.appendLittleEndian(UInt32(group.id.utf8.count))
                payload.append(contentsOf: group.id.utf8)
            }
        }
    }

    static func appendSnapshotEnd(sessionCount: Int, to bytes: inout [UInt8]) {
        appendFrame(to: &bytes) { payload in
            payload.append(Kind.snapshotEnd.rawValue)
            payload.appendLittleEndian(UInt64(sessionCount))
        }
    }

    // MARK: Reading

    /// Where a file stops being trustworthy.
    struct Damage: Sendable, Equatable {
        enum Kind: String, Sendable {
            /// The file ends inside a record: a write cut short by a crash. Expected after one.
            case tornTail = "torn tail"
            /// A complete record is wrong (checksum, length or content) with more data after it.
            case corrupt = "corrupt record"
        }
        var kind: Kind
        /// Byte offset of the first untrusted byte: the file is valid before it.
        var offset: Int
        var detail: String
    }

    /// Reads framed records one at a time and stops at the first damage.
    struct Scanner {
        let bytes: [UInt8]
        private(set) var offset: Int

        init(_ bytes: [UInt8], from offset: Int) {
            self.bytes = bytes
            self.offset = offset
        }

        enum Step {
            case record(ArraySlice<UInt8>)
            case end
            case damaged(Damage)
        }

        mutating func next() -> Step {
            let remaining = bytes.count - offset
            if remaining == 0 { return .end }
            if remaining < frameHeaderSize {
                return .damaged(Damage(kind: .tornTail, offset: offset, detail: "\(remaining) bytes of a record header"))
            }
            let length = Int(bytes.loadLittleEndianUInt32(at: offset))
            let expected = bytes.loadLittleEndianUInt32(at: offset + 4)
            if length == 0 || length > maxPayload {
                // A zero-filled tail is what a crash leaves when the size reached the disk but the data did not.
                let zeroTail = bytes[offset...].allSatisfy { $0 == 0 }
                return .damaged(Damage(kind: zeroTail ? .tornTail : .corrupt, offset: offset,
                                       detail: zeroTail ? "zero-filled tail" : "impossible record length \(length)"))
            }
            let end = offset + frameHeaderSize + length
            if end > bytes.count {
                return .damaged(Damage(kind: .tornTail, offset: offset,
                                       detail: "a \(length)-byte record with only \(bytes.count - offset - frameHeaderSize) bytes written"))
            }
            let payload = bytes[(offset + frameHeaderSize) ..< end]
            guard CRC32C.update(CRC32C.checksum(bytes[offset ..< offset + 4]), payload) == expected else {
                return .damaged(Damage(kind: end == bytes.count ? .tornTail : .corrupt, offset: offset, detail: "checksum mismatch"))
            }
            offset = end
            return .record(payload)
        }

        /// A damage report for the record just returned, whose content could not be decoded.
        func undecodable(_ payload: ArraySlice<UInt8>, _ detail: String) -> Damage {
            Damage(kind: .corrupt, offset: payload.startIndex - frameHeaderSize, detail: detail)
        }
    }

    /// Decodes a journal event payload; nil when it is not one (or is malformed).
    static func decodeEvent(_ payload: ArraySlice<UInt8>) -> (event: Event, time: Int64)? {
        var reader = DurablePayloadReader(payload)
        guard let kind = reader.byte().flatMap(Kind.init(rawValue:)), let time = reader.int64(), let id = reader.sessionID()
        else { return nil }
        switch kind {
        case .created: return reader.isAtEnd ? (.created(id), time) : nil
        case .deleted: return reader.isAtEnd ? (.deleted(id), time) : nil
        case .touched: return reader.isAtEnd ? (.touched(id), time) : nil
        case .groupSet:
            guard let flag = reader.byte(), flag <= 1, let group = reader.string(length: reader.remaining) else { return nil }
            return (.groupSet(id, group: group, isExpanded: flag == 1), time)
        case .fileHeader, .session, .snapshotEnd: return nil
        }
    }

    /// Decodes a file header payload: the generation it names.
    static func decodeFileHeader(_ payload: ArraySlice<UInt8>) -> UInt64? {
        var reader = DurablePayloadReader(payload)
        guard reader.byte() == Kind.fileHeader.rawValue, let generation = reader.uint64(), reader.int64() != nil,
              reader.isAtEnd
        else { return nil }
        return generation
    }

    /// A snapshot record: a session, or the end marker with its session count.
    enum SnapshotItem {
        case session(SessionID, lastUsed: Int64, groups: [(id: String, isExpanded: Bool)])
        case end(sessionCount: Int)
    }

    static func decodeSnapshotItem(_ payload: ArraySlice<UInt8>) -> SnapshotItem? {
        var reader = DurablePayloadReader(payload)
        switch reader.byte().flatMap(Kind.init(rawValue:)) {
        case .session:
            guard let lastUsed = reader.int64(), let id = reader.sessionID(), let count = reader.uint32(),
                  Int(count) <= reader.remaining / 5
            else { return nil }
            var groups: [(id: String, isExpanded: Bool)] = []
            groups.reserveCapacity(Int(count))
            for _ in 0 ..< count {
                guard let flag = reader.byte(), flag <= 1, let length = reader.uint32(),
                      let group = reader.string(length: Int(length))
                else { return nil }
                groups.append((group, flag == 1))
            }
            return reader.isAtEnd ? .session(id, lastUsed: lastUsed, groups: groups) : nil
        case .snapshotEnd:
            guard let count = reader.uint64(), reader.isAtEnd else { return nil }
            return .end(sessionCount: Int(count))
        default:
            return nil
        }
    }
}

/// Reads little-endian fields from a payload; every read returns nil past the end.
struct DurablePayloadReader {
    private let bytes: ArraySlice<UInt8>
    private var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    var remaining: Int { bytes.endIndex - position }
    var isAtEnd: Bool { remaining == 0 }

    mutating func byte() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        var value: UInt32 = 0
        for index in 0 ..< 4 { value |= UInt32(bytes[position + index]) << (8 * index) }
        position += 4
        return value
    }

    mutating func uint64() -> UInt64? {
        guard let low = uint32(), let high = uint32() else { return nil }
        return UInt64(high) << 32 | UInt64(low)
    }

    mutating func int64() -> Int64? { uint64().map { Int64(bitPattern: $0) } }

    mutating func sessionID() -> SessionID? {
        guard let high = uint64(), let low = uint64() else { return nil }
        return SessionID(high: high, low: low)
    }

    /// `length` bytes of valid UTF-8.
    mutating func string(length: Int) -> String? {
        guard length >= 0, remaining >= length else { return nil }
        defer { position += length }
        return String(validating: bytes[position ..< position + length], as: UTF8.self)
    }
}

fileprivate extension [UInt8] {
    mutating func appendLittleEndian(_ value: UInt32) {
        for index in 0 ..< 4 { append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    mutating func appendLittleEndian(_ value: UInt64) {
        for index in 0 ..< 8 { append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    mutating func append(_ id: SessionID) {
        appendLittleEndian(id.high)
        appendLittleEndian(id.low)
    }

    func loadLittleEndianUInt32(at offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for index in 0 ..< 4 { value |= UInt32(self[offset + index]) << (8 * index) }
        return value
    }
}
