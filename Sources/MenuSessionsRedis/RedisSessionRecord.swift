import MenuModel
import MenuSessions

/// One session as Redis holds it: the hash at `<prefix>s:<sessionID>` with four or five fields.
///
/// - `r`: the revision, decimal ASCII (what the compare-and-set script compares).
/// - `s`: the state by id (``encodeState(_:)``): `u8 format (1) | u8 base | u32 n | n × (u8 tag |
///   u8 length | id)`, tag 0/1 a flipped group (collapsed/expanded), 2 + mode byte a mark. A state
///   with a selection is format 2: `u8 2 | u8 base | u8 all selected (0/1) | u32 n | entries`, tag
///   5 a selection toggle (``PortableSelection``); a state without one stays format 1, which
///   servers from before selection read. By id, so an instance on any menu version decodes it
///   with its own menu (``state(on:)``).
/// - `v`: the ``Menu/version`` the history's splices were computed on.
/// - `h`: the history, `n × 12` bytes (``RedisHistory``), oldest first, at most `historyLimit`.
/// - `o`: where a reload entry of the history came from (``ReloadOrigin``): the menu version the
///   session was carried over from and its state then, so an instance that still keeps that menu
///   computes the entry's splices. Absent unless the history starts with a reload entry.
///
/// A hash rather than one string: the script reads `r` and `v` without parsing the state, and
/// a read is one `HMGET` either way. Invariant: `history.count` is a multiple of 12 and at most
/// `revision` entries long. Size: 2 + 2 bytes per field name, 6 + (2 + id bytes) per changed
/// group, 12 per history entry (Redis's own overhead per key comes on top: see docs/operations.md).
package struct RedisSessionRecord: Sendable, Equatable {
    package var revision: Int
    package var state: [UInt8]
    package var historyVersion: String
    package var history: [UInt8]
    /// The `o` field: ``ReloadOrigin/encoded``, empty for none.
    package var origin: [UInt8]

    package init(revision: Int, state: [UInt8], historyVersion: String, history: [UInt8], origin: [UInt8] = []) {
        self.revision = revision
        self.state = state
        self.historyVersion = historyVersion
        self.history = history
        self.origin = origin
    }

    /// The hash's field names, in the order ``init(fields:key:)`` reads them.
    package static let fieldNames = ["r", "s", "v", "h", "o"]

    /// The record from the fields' values (nil for a field the hash lacks; `o` may be left out);
    /// nil when the key holds no session (no revision). A malformed field throws, naming `key`.
    package init?(fields: [[UInt8]?], key: String) throws(RedisRecordError) {
        guard fields.count == 4 || fields.count == 5 else {
            throw RedisRecordError(key: key, problem: "expected 5 fields, got \(fields.count)")
        }
        guard let revisionBytes = fields[0] else { return nil }
        guard let revision = Int(String(decoding: revisionBytes, as: UTF8.self)), revision >= 0 else {
            throw RedisRecordError(key: key, problem: "revision is not a number")
        }
        let history = fields[3] ?? []
        guard history.count % RedisHistory.entrySize == 0 else {
            throw RedisRecordError(key: key, problem: "history of \(history.count) bytes is not whole entries")
        }
        self.init(
            revision: revision, state: fields[1] ?? [],
            historyVersion: String(decoding: fields[2] ?? [], as: UTF8.self),
            history: history, origin: fields.count == 5 ? fields[4] ?? [] : [])
    }

    /// The state on `menu`: ids `menu` lacks (or that name rows there) are dropped, as a reload
    /// drops them. O(k · (depth + log k)) for k entries.
    package func state(on menu: Menu, key: String) throws(RedisRecordError) -> SessionState {
        try Self.state(of: state, on: menu, key: key)
    }

    /// A state's bytes (an `s` field, or a ``ReloadOrigin``'s) decoded on `menu`, by the same rule.
    package static func state(of bytes: [UInt8], on menu: Menu, key: String) throws(RedisRecordError)
        -> SessionState
    {
        var ignored: [String] = []
        return SessionState(portable: try decodeState(bytes, key: key), in: menu, ignoredIDs: &ignored)
    }

    /// The entries since `since` for a reader on `menuVersion`: nil when the history does not
    /// reach back to `since`, `since` is past the revision, or the splices belong to another menu
    /// (a reader there would replay wrong rows); empty at the current revision, whatever the menu.
    package func entries(since: Int, menuVersion: String) -> [RedisHistory.Entry]? {
        if since == revision { return [] }
        guard historyVersion == menuVersion else { return nil }
        return RedisHistory.entries(history, endRevision: revision, since: since)
    }

    /// The record after a write that moves it to `revision + 1` with `state`, recording `entry`
    /// (computed on `menuVersion`): exactly what the compare-and-set script stores, so the cache
    /// holds what Redis holds without reading it back. A write on another menu starts the history
    /// (and the origin) afresh.
    package func advanced(to state: [UInt8], entry: HistoryEntry, menuVersion: String, historyLimit: Int)
        -> RedisSessionRecord
    {
        let same = historyVersion == menuVersion
        return RedisSessionRecord(
            revision: revision + 1, state: state, historyVersion: menuVersion,
            history: RedisHistory.appending(RedisHistory.entry(entry), to: same ? history : [], limit: historyLimit),
            origin: same ? origin : [])
    }

    /// The record after the carry-over of a session written on ``historyVersion`` to the menu
    /// `menuVersion`: one revision, its state unchanged (it is by id), a history of one reload
    /// entry whose origin is the older menu and this state.
    package func carried(to menuVersion: String, historyLimit: Int) -> RedisSessionRecord {
        RedisSessionRecord(
            revision: revision + 1, state: state, historyVersion: menuVersion,
            history: RedisHistory.appending(RedisHistory.reloadEntry, to: [], limit: historyLimit),
            origin: ReloadOrigin(version: historyVersion, state: state).encoded)
    }

    // MARK: The state's bytes

    static let stateFormat: UInt8 = 1
    static let selectionStateFormat: UInt8 = 2

    /// `portable` in the `s` field's form. O(bytes).
    package static func encodeState(_ portable: PortableState) -> [UInt8] {
        let hasSelection = portable.selection != PortableSelection()
        var bytes: [UInt8] =
            hasSelection
            ? [selectionStateFormat, portable.base.recordByte, portable.selection.all ? 1 : 0]
            : [stateFormat, portable.base.recordByte]
        let count = UInt32(portable.marks.count + portable.flips.count + portable.selection.toggled.count)
        withUnsafeBytes(of: count.littleEndian) { bytes.append(contentsOf: $0) }
        func append(_ tag: UInt8, _ id: String) {
            // Config ids are 1 to 128 bytes (MenuConfigError), so one length byte holds any.
            precondition(id.utf8.count <= 255, "a menu id longer than 255 bytes")
            bytes.append(tag)
            bytes.append(UInt8(id.utf8.count))
            bytes.append(contentsOf: id.utf8)
        }
        for mark in portable.marks { append(2 + mark.mode.recordByte, mark.id) }
        for flip in portable.flips { append(flip.isExpanded ? 1 : 0, flip.id) }
        for id in portable.selection.toggled { append(5, id) }
        return bytes
    }

    /// The `s` field back; an empty field is the default state (a record written without one).
    package static func decodeState(_ bytes: [UInt8], key: String) throws(RedisRecordError) -> PortableState {
        guard !bytes.isEmpty else { return PortableState() }
        func fail(_ problem: String) -> RedisRecordError { RedisRecordError(key: key, problem: "state: " + problem) }
        let format = bytes[0]
        guard format == stateFormat || format == selectionStateFormat else { throw fail("unknown format \(format)") }
        let head = format == stateFormat ? 6 : 7
        guard bytes.count >= head else { throw fail("\(bytes.count) bytes, less than a header") }
        guard let base = ExpansionMode(recordByte: bytes[1]) else { throw fail("unknown base \(bytes[1])") }
        var portable = PortableState(base: base)
        if format == selectionStateFormat {
            guard bytes[2] <= 1 else { throw fail("selection base \(bytes[2])") }
            portable.selection.all = bytes[2] == 1
        }
        let count =
            Int(bytes[head - 4]) | Int(bytes[head - 3]) << 8 | Int(bytes[head - 2]) << 16 | Int(bytes[head - 1]) << 24
        guard count <= (bytes.count - head) / 3 else { throw fail("\(count) entries in \(bytes.count) bytes") }
        var offset = head
        for _ in 0 ..< count {
            guard offset + 2 <= bytes.count else { throw fail("truncated at byte \(offset)") }
            let tag = bytes[offset]
            let length = Int(bytes[offset + 1])
            guard length > 0, offset + 2 + length <= bytes.count else {
                throw fail("id length \(length) at byte \(offset)")
            }
            let id = String(decoding: bytes[offset + 2 ..< offset + 2 + length], as: UTF8.self)
            switch tag {
            case 0, 1: portable.flips.append(.init(id: id, isExpanded: tag == 1))
            case 2 ... 4: portable.marks.append(.init(id: id, mode: ExpansionMode(recordByte: tag - 2)!))
            case 5 where format == selectionStateFormat: portable.selection.toggled.append(id)
            default: throw fail("unknown entry tag \(tag) at byte \(offset)")
            }
            offset += 2 + length
        }
        guard offset == bytes.count else { throw fail("\(bytes.count - offset) bytes after the last entry") }
        return portable
    }
}

/// Where a session's reload entry came from: the menu version it was carried over from and its
/// state (the `s` field's bytes) then. On the wire `u8 version length | version | state`.
package struct ReloadOrigin: Sendable, Equatable {
    package var version: String
    package var state: [UInt8]

    package init(version: String, state: [UInt8]) {
        self.version = version
        self.state = state
    }

    /// The bytes of an `o` field; nil for none or one this server cannot read.
    package init?(_ bytes: [UInt8]) {
        guard let length = bytes.first, bytes.count > Int(length), length > 0 else { return nil }
        version = String(decoding: bytes[1 ... Int(length)], as: UTF8.self)
        state = Array(bytes[(Int(length) + 1)...])
    }

    package var encoded: [UInt8] {
        let version = Array(self.version.utf8.prefix(255))
        return [UInt8(version.count)] + version + state
    }
}

/// A record Redis holds that this server cannot read (written by something else, or damaged):
/// what a store call answers as unavailable, naming the key to inspect or delete.
package struct RedisRecordError: Error, Sendable, Equatable, CustomStringConvertible {
    package var key: String
    package var problem: String

    package var description: String {
        "redis key \(key) does not hold a session record this server can read (\(problem)); delete it"
    }
}

/// The `h` field: one 12-byte entry per revision, a ``HistoryEntry``'s three words little
/// endian (`at` = 0xFFFFFFFF for a write that changed no visible row), or 0xFFFFFFFE for a carry-over
/// to a new menu (its splices are computed from the record's ``ReloadOrigin``). The script appends
/// with the same rule as ``appending(_:to:limit:)``. A read O(entries answered).
package enum RedisHistory {
    package static let entrySize = 12

    /// One entry read back: what a write left (``HistoryEntry``), or a reload (nil `entry`).
    package struct Entry: Sendable, Equatable {
        package var revision: Int
        package var entry: HistoryEntry?
        package var isReload: Bool { entry == nil }

        package init(revision: Int, entry: HistoryEntry?) {
            self.revision = revision
            self.entry = entry
        }
        /// The write's splice, if it changed rows.
        package var change: RowChange? { entry?.splice }
    }

    /// The entry of a carry-over to a new menu.
    package static let reloadEntry: [UInt8] = {
        var bytes: [UInt8] = []
        for word: UInt32 in [HistoryEntry.reloadWord, 0, 0] {
            withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }()

    /// The entry of a write that left `entry`.
    package static func entry(_ entry: HistoryEntry) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entrySize)
        let words = entry.words
        for word in [words.at, words.inserted, words.removed] {
            withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    /// `history` with `entry` appended, keeping the newest `limit` entries.
    package static func appending(_ entry: [UInt8], to history: [UInt8], limit: Int) -> [UInt8] {
        let all = history + entry
        return Array(all.suffix(max(0, limit) * entrySize))
    }

    /// The entries from revision `since` to `endRevision`, oldest first; nil when `history`
    /// does not reach back to `since` or `since` is past `endRevision`.
    package static func entries(_ history: [UInt8], endRevision: Int, since: Int) -> [Entry]? {
        let count = history.count / entrySize
        guard since >= endRevision - count, since <= endRevision else { return nil }
        func word(_ offset: Int) -> UInt32 {
            UInt32(history[offset]) | UInt32(history[offset + 1]) << 8 | UInt32(history[offset + 2]) << 16 | UInt32(
                history[offset + 3]) << 24
        }
        return (since ..< endRevision).map { revision in
            let offset = (count - (endRevision - revision)) * entrySize
            return Entry(
                revision: revision + 1, entry: HistoryEntry(words: word(offset), word(offset + 4), word(offset + 8)))
        }
    }
}

extension ExpansionMode {
    /// The mode's byte in a record: its place in `allCases` (0 default, 1 expanded, 2 collapsed).
    var recordByte: UInt8 { UInt8(Self.allCases.firstIndex(of: self)!) }

    init?(recordByte: UInt8) {
        guard Int(recordByte) < Self.allCases.count else { return nil }
        self = Self.allCases[Int(recordByte)]
    }
}
