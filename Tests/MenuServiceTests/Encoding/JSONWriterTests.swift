import Foundation
import MenuModel
import Testing

@testable import MenuService
@testable import MenuSessions

@Suite struct JSONWriterTests {
    func written(_ body: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        body(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test func stringsEscapeOnlyWhatJSONRequires() {
        #expect(written { $0.string("a\"b\\c\n\t\u{01}é宮") } == #""a\"b\\c\n\t\u0001é宮""#)
    }

    @Test func everyControlCharacterRoundTripsThroughJSONSerialization() throws {
        let text = String((0 ..< 0x20).map { Character(Unicode.Scalar($0)!) }) + "end"
        let json = written {
            $0.raw("[")
            $0.string(text)
            $0.raw("]")
        }
        let decoded = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String]
        #expect(decoded == [text])
    }

    @Test(arguments: [0, 7, -7, 1234567890, Int.max, Int.min + 1])
    func integersMatchTheirDescription(value: Int) {
        #expect(written { $0.integer(value) } == String(value))
    }

    @Test func numbersKeepTheirShortestForm() {
        #expect(written { $0.value(.number(12.5)) } == "12.5")
        #expect(written { $0.value(.number(0.1)) } == "0.1")
        #expect(written { $0.value(.integer(38)) } == "38")
        #expect(written { $0.value(.number(1e300)) } == "1e+300")
    }

    @Test func objectsWriteSortedKeysAndNestedValues() {
        let value: JSONValue = .object(["b": .array([.null, .bool(true)]), "a": .string("x")])
        #expect(written { $0.value(value) } == #"{"a":"x","b":[null,true]}"#)
    }
}

@Suite("RowOpening: row indexes counted up in decimal")
struct RowOpeningTests {
    /// Writes `count` consecutive openings from `start` and returns them as text.
    func openings(from start: Int, count: Int) -> String {
        var writer = JSONWriter()
        var opening = RowOpening(index: start)
        for _ in 0 ..< count {
            writer.raw(atMost: RowOpening.maxLength) { opening.store(at: $0) }
            opening.advance()
        }
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test(arguments: [
        0, 8, 9, 98, 99, 999, 9_999_999, 99_999_998, 99_999_999, 123_456_789_012_345, 999_999_999_999_999_998,
        Int.max - 3
    ])
    func consecutiveIndexesMatchFormattedNumbers(start: Int) {
        let expected = "[" + (start ..< start + 3).map { #"{"index":\#($0)"# }.joined(separator: ",")
        #expect(openings(from: start, count: 3) == expected)
    }

    @Test func aThousandIncrementsCarryLikeAddition() {
        let expected = "[" + (0 ..< 1_000).map { #"{"index":\#($0)"# }.joined(separator: ",")
        #expect(openings(from: 0, count: 1_000) == expected)
    }
}
