import MenuModel
import MenuSessions
import NaiveReference
import Testing

@testable import MenuSessionsRedis

/// The record Redis holds per session: the state by id decodes on any menu version, the history
/// answers only a reader on the menu it was computed on, and damage is refused by name.
@Suite("Redis store: the session record")
struct RedisSessionRecordTests {
    /// a (open) > [a1, b (closed) > [b1]]; d (closed) > [d1].
    static func menu() throws -> Menu {
        try makeMenu([
            .group("a", expanded: true, [.row("a1"), .group("b", expanded: false, [.row("b1")])]),
            .group("d", expanded: false, [.row("d1")])
        ])
    }

    @Test func aStateByIDRoundTripsByteForByteAndDropsIDsAnotherMenuLacks() throws {
        let portable = PortableState(
            base: .collapsed, marks: [.init(id: "a", mode: .expanded)],
            flips: [.init(id: "b", isExpanded: false), .init(id: "gone", isExpanded: true)])
        let bytes = RedisSessionRecord.encodeState(portable)
        #expect(bytes.count == 6 + (2 + 1) * 2 + (2 + 4))
        #expect(Array(bytes.prefix(2)) == [1, 2])  // format 1, base collapsed
        #expect(try RedisSessionRecord.decodeState(bytes, key: "k") == portable)
        let record = RedisSessionRecord(revision: 3, state: bytes, historyVersion: "v1", history: [])
        var ignored: [String] = []
        let expected = SessionState(portable: portable, in: try Self.menu(), ignoredIDs: &ignored)
        #expect(ignored == ["gone"])
        #expect(try record.state(on: Self.menu(), key: "k") == expected)
        #expect(try RedisSessionRecord.decodeState([], key: "k") == PortableState())
    }

    @Test func aDamagedRecordIsRefusedNamingItsKey() throws {
        let good = RedisSessionRecord.encodeState(PortableState(flips: [.init(id: "b", isExpanded: true)]))
        let damages: [[UInt8]] = [
            [9] + good.dropFirst(), Array(good.dropLast()), good + [0], [1, 7, 0, 0, 0, 0], [1, 0, 1, 0, 0, 0, 5, 1, 98]
        ]
        for damaged in damages {
            #expect(throws: RedisRecordError.self) { try RedisSessionRecord.decodeState(damaged, key: "menu:s:x") }
        }
        #expect(throws: RedisRecordError.self) {
            try RedisSessionRecord(fields: [Array("x".utf8), nil, nil, nil], key: "k")
        }
        #expect(throws: RedisRecordError.self) {
            try RedisSessionRecord(fields: [Array("1".utf8), nil, nil, [1, 2]], key: "k")
        }
        #expect(try RedisSessionRecord(fields: [nil, nil, nil, nil], key: "k") == nil)
        let error = RedisRecordError(key: "menu:s:x", problem: "state: truncated at byte 6")
        #expect(
            error.description
                == "redis key menu:s:x does not hold a session record this server can read (state: truncated at byte 6); delete it"
        )
    }

    @Test func theHistoryKeepsTheNewestEntriesAndAnswersOnlyItsOwnMenuVersion() {
        var record = RedisSessionRecord(revision: 0, state: [], historyVersion: "", history: [])
        let splices: [RowChange?] = [
            RowChange(at: 1, inserted: 0, removed: 9), nil, RowChange(at: 0, inserted: 4, removed: 0)
        ]
        for splice in splices {
            record = record.advanced(to: [], entry: .splice(splice), menuVersion: "v1", historyLimit: 2)
        }
        #expect(record.revision == 3 && record.history.count == 24)
        #expect(record.entries(since: 1, menuVersion: "v1")?.map(\.revision) == [2, 3])
        #expect(
            record.entries(since: 1, menuVersion: "v1")?.map(\.change) == [
                nil, RowChange(at: 0, inserted: 4, removed: 0)
            ])
        #expect(record.entries(since: 0, menuVersion: "v1") == nil)  // older than the history
        #expect(record.entries(since: 4, menuVersion: "v1") == nil)  // past the revision
        #expect(record.entries(since: 2, menuVersion: "v2") == nil)  // splices of another menu's rows
        #expect(record.entries(since: 3, menuVersion: "v2")?.isEmpty == true)
        // A write on another menu starts the history over.
        let moved = record.advanced(to: [], entry: .splice(nil), menuVersion: "v2", historyLimit: 2)
        #expect(moved.history.count == 12 && moved.entries(since: 3, menuVersion: "v2")?.count == 1)
        #expect(record.advanced(to: [], entry: .splice(nil), menuVersion: "v1", historyLimit: 0).history.isEmpty)
    }
}

/// The `s` field with a selection (format 2), and without one (format 1, as servers from before
/// selection wrote and read it).
@Suite struct RedisSelectionRecordTests {
    @Test func aStateWithASelectionRoundTripsAsFormat2AndOneWithoutStaysFormat1() throws {
        let plain = PortableState(flips: [.init(id: "c", isExpanded: false)])
        #expect(RedisSessionRecord.encodeState(plain).first == 1)
        #expect(try RedisSessionRecord.decodeState(RedisSessionRecord.encodeState(plain), key: "k") == plain)
        var chosen = plain
        chosen.selection = PortableSelection(all: true, toggled: ["a", "b1"])
        let bytes = RedisSessionRecord.encodeState(chosen)
        #expect(bytes.first == 2)
        #expect(try RedisSessionRecord.decodeState(bytes, key: "k") == chosen)
        // A selection toggle in a format 1 record is not something this server wrote.
        var forged = RedisSessionRecord.encodeState(plain)
        forged[5] = 0
        forged[2] = 2
        forged += [5, 1, UInt8(ascii: "a")]
        #expect(throws: RedisRecordError.self) { try RedisSessionRecord.decodeState(forged, key: "k") }
    }

    @Test func aSelectionHistoryEntryReadsBackAsItsRows() {
        let entry = HistoryEntry.reconfigured(ReconfiguredRows(at: 7, count: 3, node: 12))
        let history = RedisHistory.appending(RedisHistory.entry(entry), to: RedisHistory.entry(.splice(nil)), limit: 4)
        #expect(
            RedisHistory.entries(history, endRevision: 2, since: 0) == [
                RedisHistory.Entry(revision: 1, entry: .splice(nil)), RedisHistory.Entry(revision: 2, entry: entry)
            ])
    }
}
