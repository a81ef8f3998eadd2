import MenuModel
import MenuSessions

/// The on-disk format shared by the journal and the snapshot.
///
/// A file is an 8-byte magic followed by framed records. A frame is
/// `u32 payload length | u32 CRC-32C of (length bytes ++ payload) | payload`, little-endian, and
/// a payload starts with a ``Kind`` byte. The checksum covers the length, so a damaged length is
/// caught like a damaged payload, and a frame found by scanning forward past damage is genuine
/// but for a 2^-32 chance (``DurableSalvage`` reads files that way). Writers never build a
/// payload over ``maxPayload``: a session with more groups than fit is split over records.
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
        /// Journal: as ``groupSet``, with the revision the change left the session at:
        /// `i64 time | id | u64 revision | u8 isExpanded | group id`. What this version writes;
        /// a ``groupSet`` (older files) replays as one revision more than the session had.
        case groupSetAtRevision = 0x14
        /// Journal: a session's whole state, replacing the one it had (a bulk command, a session
        /// created holding a state, the undo of either):
        /// `i64 time | id | u64 revision | u8 base | u32 total | u32 n | n × entry`, an entry being
        /// `u8 tag | u32 length | group id` (``StateEntry``). `total` counts the entries of this
        /// record and of the ``stateMore`` records right after it; replay installs the state only
        /// once all of them have arrived, so a torn or damaged part leaves the state before.
        case state = 0x15
        /// Journal: more entries of the ``state`` record before it: `i64 time | id | u32 n | n × entry`.
        case stateMore = 0x16
        /// Journal: a menu reload, the `reloads`-th the data directory has seen: `i64 time | u64 reloads`.
        /// Written before any session is carried over to that menu. A session's revision grows by
        /// one per reload after its last record (see ``Event``).
        case reload = 0x17
        /// Journal: as ``created``, at a reload count above 0: `i64 time | id | u64 reloads`.
        case createdAtReload = 0x18
        /// Journal: as ``groupSetAtRevision``, at a reload count above 0:
        /// `i64 time | id | u64 revision | u64 reloads | u8 isExpanded | group id`.
        case groupSetAtReload = 0x19
        /// Journal: as ``state``, at a reload count above 0:
        /// `i64 time | id | u64 revision | u64 reloads | u8 base | u32 total | u32 n | n × entry`.
        case stateAtReload = 0x1A
        /// Snapshot: `i64 last used | id | u32 n | n × (u8 isExpanded | u32 length | group id)`.
        case session = 0x20
        /// Snapshot, last record: `u64 session count`.
        case snapshotEnd = 0x21
        /// Snapshot: more groups of the session record before it, when they did not fit in one
        /// payload: `id | u32 n | n × (u8 isExpanded | u32 length | group id)`; after a
        /// ``sessionState`` record its entries may be marks and the selection too (``StateEntry``: tags 2-6).
        case sessionGroups = 0x22
        /// Snapshot: as ``session``, for a session at a revision other than 0:
        /// `i64 last used | id | u64 revision | u32 n | n × (u8 isExpanded | u32 length | group id)`.
        case sessionAtRevision = 0x23
        /// Snapshot: a session whose state has a base mode other than `default` or marks:
        /// `i64 last used | id | u64 revision | u8 base | u32 n | n × entry` (``StateEntry``);
        /// more entries follow in ``sessionGroups`` records. Other sessions keep the kinds above.
        case sessionState = 0x24
        /// Snapshot: the reload count the session records after it are at, when above 0:
        /// `u64 reloads` (their revisions are carried over to that reload's menu).
        case snapshotReloads = 0x25
    }

    /// The kinds a journal holds, for ``DurableSalvage``.
    static let journalKinds: [Kind] = [
        .created, .deleted, .groupSet, .touched, .groupSetAtRevision, .state, .stateMore, .reload, .createdAtReload,
        .groupSetAtReload, .stateAtReload
    ]
    /// The kinds a snapshot holds, for ``DurableSalvage``.
    static let snapshotKinds: [Kind] = [
        .session, .sessionGroups, .snapshotEnd, .sessionAtRevision, .sessionState, .snapshotReloads
    ]

    /// A change as the journal keeps it: resolved (a toggle is journaled as the state it set) and
    /// by group id, never by position, so a journal replays onto a changed menu. A group set
    /// carries the session's revision after it (nil only when read from an older file), so
    /// replaying a record twice leaves the revision as it is. A bulk command is journaled as the
    /// whole state it leaves (`state`, then `stateMore` parts when it does not fit in one record:
    /// ``stateEvents(of:_:revision:reloads:payloadLimit:)``), whatever number of groups it affects.
    ///
    /// Reloads: a carry-over to a new menu is a revision of the session, but it is not journaled
    /// per session. The journal records each reload once (``reload(count:)``, the data
    /// directory's reload count), and every record that sets a revision says the reload count of
    /// the menu it was computed on (`reloads`, 0 in files older than reloads). Replay then gives a
    /// session `revision + (reloads recorded - reloads of its last record)`: what memory showed,
    /// one revision per reload crossed, whether or not the carry-over had happened yet.
    enum Event: Equatable {
        case created(SessionID, reloads: Int = 0)
        case deleted(SessionID)
        case groupSet(SessionID, group: String, isExpanded: Bool, revision: Int? = nil, reloads: Int = 0)
        case touched(SessionID)
        /// The session's state from now on: `base`, and the first of `total` entries.
        case state(SessionID, revision: Int, reloads: Int = 0, base: ExpansionMode, total: Int, entries: [StateEntry])
        case stateMore(SessionID, entries: [StateEntry])
        /// The data directory's `count`-th menu reload.
        case reload(count: Int)

        /// The session the record is about; nil for a reload.
        var session: SessionID? {
            switch self {
            case .created(let id, _), .deleted(let id), .groupSet(let id, _, _, _, _), .touched(let id),
                .state(let id, _, _, _, _, _),
                .stateMore(let id, _):
                id
            case .reload: nil
            }
        }
    }

    // MARK: Writing

    /// Appends one frame whose payload `build` writes.
    static func appendFrame(to bytes: inout [UInt8], _ build: (inout [UInt8]) -> Void) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: frameHeaderSize))
        build(&bytes)
        let payloadLength = bytes.count - start - frameHeaderSize
        // Recovery refuses longer frames as damage: writing one would lose it at the next start.
        precondition(
            payloadLength <= maxPayload, "a \(payloadLength)-byte record is over the \(maxPayload)-byte frame limit")
        let length = UInt32(payloadLength)
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
            // At reload count 0 the kinds from before reloads: such files stay as they were.
            let kind: Kind =
                switch event {
                case .created(_, let reloads): reloads > 0 ? .createdAtReload : .created
                case .deleted: .deleted
                case .groupSet(_, _, _, nil, _): .groupSet
                case .groupSet(_, _, _, _, let reloads): reloads > 0 ? .groupSetAtReload : .groupSetAtRevision
                case .touched: .touched
                case .state(_, _, let reloads, _, _, _): reloads > 0 ? .stateAtReload : .state
                case .stateMore: .stateMore
                case .reload: .reload
                }
            payload.append(kind.rawValue)
            payload.appendLittleEndian(UInt64(bitPattern: time))
            if let session = event.session { payload.append(session) }
            switch event {
            case .created(_, let reloads):
                if kind == .createdAtReload { payload.appendLittleEndian(UInt64(reloads)) }
            case .groupSet(_, let group, let isExpanded, let revision, let reloads):
                if let revision { payload.appendLittleEndian(UInt64(revision)) }
                if kind == .groupSetAtReload { payload.appendLittleEndian(UInt64(reloads)) }
                payload.append(isExpanded ? 1 : 0)
                payload.append(contentsOf: group.utf8)
            case .state(_, let revision, let reloads, let base, let total, let entries):
                payload.appendLittleEndian(UInt64(revision))
                if kind == .stateAtReload { payload.appendLittleEndian(UInt64(reloads)) }
                payload.append(base.durableByte)
                payload.appendLittleEndian(UInt32(total))
                appendEntries(entries, to: &payload)
            case .stateMore(_, let entries):
                appendEntries(entries, to: &payload)
            case .reload(let count):
                payload.appendLittleEndian(UInt64(count))
            case .deleted, .touched: break
            }
        }
    }

    /// Appends a session's snapshot records: one ``Kind/session`` record (``Kind/sessionState``
    /// when `state` has a base mode other than `default`, marks or a selection), then as many
    /// ``Kind/sessionGroups`` records as it takes to keep every payload within `payloadLimit`.
    static func appendSession(
        _ id: SessionID, lastUsed: Int64, state: PortableState, revision: Int = 0,
        to bytes: inout [UInt8], payloadLimit: Int = maxPayload
    ) {
        let entries = stateEntries(state)
        let kind: Kind =
            state.base != .default || !state.marks.isEmpty || state.selection != PortableSelection()
            ? .sessionState : revision > 0 ? .sessionAtRevision : .session
        // kind, last used, id, (revision, (base)), count; a continuation: kind, id, count.
        let headSize = 1 + 8 + 16 + (kind == .session ? 0 : 8) + (kind == .sessionState ? 1 : 0) + 4
        for (index, part) in chunked(entries, firstHead: headSize, moreHead: 1 + 16 + 4, payloadLimit: payloadLimit)
            .enumerated()
        {
            appendFrame(to: &bytes) { payload in
                if index == 0 {
                    payload.append(kind.rawValue)
                    payload.appendLittleEndian(UInt64(bitPattern: lastUsed))
                    payload.append(id)
                    if kind != .session { payload.appendLittleEndian(UInt64(revision)) }
                    if kind == .sessionState { payload.append(state.base.durableByte) }
                } else {
                    payload.append(Kind.sessionGroups.rawValue)
                    payload.append(id)
                }
                appendEntries(part, to: &payload)
            }
        }
    }

    /// ``appendSession(_:lastUsed:state:revision:to:payloadLimit:)`` for a state of flipped groups only.
    static func appendSession(
        _ id: SessionID, lastUsed: Int64, groups: [(id: String, isExpanded: Bool)], revision: Int = 0,
        to bytes: inout [UInt8], payloadLimit: Int = maxPayload
    ) {
        appendSession(
            id, lastUsed: lastUsed,
            state: PortableState(flips: groups.map { .init(id: $0.id, isExpanded: $0.isExpanded) }),
            revision: revision, to: &bytes, payloadLimit: payloadLimit)
    }

    /// Appends the record saying the session records after it are at reload count `reloads`.
    static func appendSnapshotReloads(_ reloads: Int, to bytes: inout [UInt8]) {
        appendFrame(to: &bytes) { payload in
            payload.append(Kind.snapshotReloads.rawValue)
            payload.appendLittleEndian(UInt64(reloads))
        }
    }

    static func appendSnapshotEnd(sessionCount: Int, to bytes: inout [UInt8]) {
        appendFrame(to: &bytes) { payload in
            payload.append(Kind.snapshotEnd.rawValue)
            payload.appendLittleEndian(UInt64(sessionCount))
        }
    }

    // MARK: Reading

    /// The payload of the frame at `offset` when the frame is whole: a length from 1 to
    /// ``maxPayload`` (the stored one, or `length` when a repair tries another), all of it inside
    /// `bytes`, and a checksum over that length and the payload that matches the stored one.
    /// Cost: O(length).
    static func frame(in bytes: [UInt8], at offset: Int, length: Int? = nil) -> ArraySlice<UInt8>? {
        guard offset >= 0, bytes.count - offset >= frameHeaderSize else { return nil }
        let stored = Int(bytes.loadLittleEndianUInt32(at: offset))
        let length = length ?? stored
        guard length >= 1, length <= maxPayload, length <= bytes.count - offset - frameHeaderSize else { return nil }
        let payload = bytes[(offset + frameHeaderSize) ..< (offset + frameHeaderSize + length)]
        var lengthCRC = CRC32C.checksum(bytes[offset ..< offset + 4])
        if length != stored {
            var lengthBytes: [UInt8] = []
            lengthBytes.appendLittleEndian(UInt32(length))
            lengthCRC = CRC32C.checksum(lengthBytes)
        }
        guard CRC32C.update(lengthCRC, payload) == bytes.loadLittleEndianUInt32(at: offset + 4) else { return nil }
        return payload
    }

    /// Decodes a journal event payload; nil when it is not one (or is malformed).
    static func decodeEvent(_ payload: ArraySlice<UInt8>) -> (event: Event, time: Int64)? {
        var reader = DurablePayloadReader(payload)
        guard let kind = reader.byte().flatMap(Kind.init(rawValue:)), let time = reader.int64() else { return nil }
        if kind == .reload {
            guard let count = reader.count(), count > 0, reader.isAtEnd else { return nil }
            return (.reload(count: count), time)
        }
        guard let id = reader.sessionID() else { return nil }
        switch kind {
        case .created: return reader.isAtEnd ? (.created(id), time) : nil
        case .createdAtReload:
            guard let reloads = reader.count(), reloads > 0, reader.isAtEnd else { return nil }
            return (.created(id, reloads: reloads), time)
        case .deleted: return reader.isAtEnd ? (.deleted(id), time) : nil
        case .touched: return reader.isAtEnd ? (.touched(id), time) : nil
        case .groupSet, .groupSetAtRevision, .groupSetAtReload:
            var revision: Int?
            var reloads = 0
            if kind != .groupSet {
                guard let stored = reader.count() else { return nil }
                revision = stored
            }
            if kind == .groupSetAtReload {
                guard let stored = reader.count(), stored > 0 else { return nil }
                reloads = stored
            }
            guard let flag = reader.byte(), flag <= 1, let group = reader.string(length: reader.remaining) else {
                return nil
            }
            return (.groupSet(id, group: group, isExpanded: flag == 1, revision: revision, reloads: reloads), time)
        case .state, .stateAtReload:
            guard let revision = reader.count() else { return nil }
            var reloads = 0
            if kind == .stateAtReload {
                guard let stored = reader.count(), stored > 0 else { return nil }
                reloads = stored
            }
            guard let base = reader.byte().flatMap(ExpansionMode.init(durableByte:)),
                let total = reader.uint32(), let entries = decodeEntries(&reader), entries.count <= total
            else { return nil }
            return (
                .state(id, revision: revision, reloads: reloads, base: base, total: Int(total), entries: entries), time
            )
        case .stateMore:
            guard let entries = decodeEntries(&reader) else { return nil }
            return (.stateMore(id, entries: entries), time)
        case .fileHeader, .session, .sessionGroups, .snapshotEnd, .sessionAtRevision, .sessionState, .snapshotReloads,
            .reload:
            return nil
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

    /// A snapshot record: a session (of flipped groups only, or with a base and marks), more
    /// entries of one, or the end marker with its session count.
    enum SnapshotItem {
        case session(SessionID, lastUsed: Int64, groups: [(id: String, isExpanded: Bool)], revision: Int = 0)
        case sessionState(SessionID, lastUsed: Int64, revision: Int, base: ExpansionMode, entries: [StateEntry])
        case moreGroups(SessionID, entries: [StateEntry])
        /// The reload count of the session records after it.
        case reloads(Int)
        case end(sessionCount: Int)
    }

    static func decodeSnapshotItem(_ payload: ArraySlice<UInt8>) -> SnapshotItem? {
        var reader = DurablePayloadReader(payload)
        switch reader.byte().flatMap(Kind.init(rawValue:)) {
        case .session:
            guard let lastUsed = reader.int64(), let id = reader.sessionID(), let groups = decodeGroups(&reader)
            else { return nil }
            return .session(id, lastUsed: lastUsed, groups: groups)
        case .sessionAtRevision:
            guard let lastUsed = reader.int64(), let id = reader.sessionID(), let revision = reader.uint64(),
                revision <= UInt64(Int.max), let groups = decodeGroups(&reader)
            else { return nil }
            return .session(id, lastUsed: lastUsed, groups: groups, revision: Int(revision))
        case .sessionState:
            guard let lastUsed = reader.int64(), let id = reader.sessionID(), let revision = reader.uint64(),
                revision <= UInt64(Int.max), let base = reader.byte().flatMap(ExpansionMode.init(durableByte:)),
                let entries = decodeEntries(&reader)
            else { return nil }
            return .sessionState(id, lastUsed: lastUsed, revision: Int(revision), base: base, entries: entries)
        case .sessionGroups:
            guard let id = reader.sessionID(), let entries = decodeEntries(&reader) else { return nil }
            return .moreGroups(id, entries: entries)
        case .snapshotReloads:
            guard let reloads = reader.count(), reloads > 0, reader.isAtEnd else { return nil }
            return .reloads(reloads)
        case .snapshotEnd:
            guard let count = reader.uint64(), reader.isAtEnd else { return nil }
            return .end(sessionCount: Int(clamping: count))
        default:
            return nil
        }
    }

    /// `u32 n | n × (u8 isExpanded | u32 length | group id)`, which must end the payload: the
    /// entries of the kinds written before marks, flips only.
    private static func decodeGroups(_ reader: inout DurablePayloadReader) -> [(id: String, isExpanded: Bool)]? {
        guard let entries = decodeEntries(&reader) else { return nil }
        var groups: [(id: String, isExpanded: Bool)] = []
        groups.reserveCapacity(entries.count)
        for entry in entries {
            guard case .flip(let id, let isExpanded) = entry else { return nil }
            groups.append((id, isExpanded))
        }
        return groups
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

    /// A `u64` that fits an `Int` (a revision, a reload count).
    mutating func count() -> Int? {
        guard let value = uint64(), value <= UInt64(Int.max) else { return nil }
        return Int(value)
    }

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

extension [UInt8] {
    mutating func appendLittleEndian(_ value: UInt32) {
        for index in 0 ..< 4 { append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    fileprivate mutating func appendLittleEndian(_ value: UInt64) {
        for index in 0 ..< 8 { append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    fileprivate mutating func append(_ id: SessionID) {
        appendLittleEndian(id.high)
        appendLittleEndian(id.low)
    }

    func loadLittleEndianUInt32(at offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for index in 0 ..< 4 { value |= UInt32(self[offset + index]) << (8 * index) }
        return value
    }
}
