import Testing

@testable import HTTPCore
@testable import HTTPServer

@Suite("HTTPFields: request headers and query arguments in one byte block")
struct HTTPFieldsTests {
    let fields = HTTPFields([
        (name: "x-session-id", value: "abc"), (name: "x-session-id-extra", value: "def"),
        (name: "flag", value: nil), (name: "x-session-id", value: "ghi"), (name: "empty", value: "")
    ])

    @Test func iterationKeepsWireOrderDuplicatesAndMissingValues() {
        #expect(fields.map(\.name) == ["x-session-id", "x-session-id-extra", "flag", "x-session-id", "empty"])
        #expect(fields.map(\.value) == ["abc", "def", nil, "ghi", ""])
    }

    @Test func namesCompareExactlyOrByPrefix() {
        #expect(fields.name(at: 0, equals: "x-session-id"))
        #expect(!fields.name(at: 1, equals: "x-session-id"))
        #expect(fields.name(at: 1, hasPrefix: "x-session-id"))
        #expect(!fields.name(at: 2, hasPrefix: "flag-longer-than-the-name"))
        #expect(!fields.name(at: 0, equals: "X-Session-Id"))
    }

    @Test func lookupsByNameCountAndFindTheFirst() {
        #expect(fields.count(named: "x-session-id") == 2)
        #expect(fields.count(named: "missing") == 0)
        #expect(fields.firstIndex(named: "flag") == 2)
        #expect(fields.firstValue(named: "x-session-id") == "abc")
        #expect(fields.firstValue(named: "flag") == nil)
        #expect(fields.firstValue(named: "empty") == "")
    }

    @Test func valueBytesAreLentWithoutMakingAString() {
        #expect(fields.withValue(at: 3) { $0.map { Array($0) } } == Array("ghi".utf8))
        #expect(fields.withValue(at: 2) { $0 == nil })
        #expect(fields.withValue(at: 4) { $0?.count } == 0)
    }

    @Test func requestHeadersAreLowercasedAndFoundCaseInsensitively() {
        let request = HTTPRequest(
            method: "GET", path: "/", headers: [(name: "X-Thing", value: "1"), (name: "HOST", value: "h")])
        #expect(request.headers.map(\.name) == ["x-thing", "host"])
        #expect(request.header("x-THING") == "1")
        #expect(request.header("missing") == nil)
    }
}

@Suite("HTTPFields.Writer: fields copied into storage measured in advance")
struct HTTPFieldsWriterTests {
    @Test func aFieldThatDoesNotFitIsRefusedAndTheFieldsBeforeItAreKept() {
        var refused: [Bool] = []
        let fields = HTTPFields.filled(fields: 3, bytes: 10) { writer in
            for (name, value) in [("abc", "12"), ("toolong", "123456"), ("de", "3")] {
                let copied = Array(name.utf8).withUnsafeBytes { name in
                    Array(value.utf8).withUnsafeBytes { writer.append(name: name, value: $0) }
                }
                refused.append(!copied)
            }
        }
        #expect(refused == [false, true, false])
        #expect(fields.map(\.name) == ["abc", "de"])
        #expect(fields.map(\.value) == ["12", "3"])
    }

    @Test func moreFieldsThanMeasuredAreRefused() {
        let fields = HTTPFields.filled(fields: 1, bytes: 100) { writer in
            for name in ["a", "b"] {
                _ = Array(name.utf8).withUnsafeBytes { writer.append(name: $0, value: nil) }
            }
        }
        #expect(fields.map(\.name) == ["a"])
        #expect(fields.map(\.value) == [nil])
    }

    /// Offers `pairs` to `writer`.
    private func offer(_ pairs: [(String, String)], to writer: inout HTTPFields.Writer) {
        for (name, value) in pairs {
            _ = Array(name.utf8).withUnsafeBytes { name in
                Array(value.utf8).withUnsafeBytes { writer.append(name: name, value: $0) }
            }
        }
    }

    @Test func fieldsThatFitTheExpectedSizeAreCopiedInOnePass() {
        var calls = 0
        let pairs = [("a", "1"), ("bb", "22")]
        let fields = HTTPFields.filled(expectingFields: 4, bytes: 16) { writer in
            calls += 1
            offer(pairs, to: &writer)
        }
        #expect(calls == 1)
        #expect(fields.map(\.name) == ["a", "bb"])
        #expect(fields.map(\.value) == ["1", "22"])
    }

    @Test(arguments: [(2, 1000), (100, 10)])
    func fieldsPastTheExpectedSizeAreCopiedWholeInASecondPass(expectedFields: Int, expectedBytes: Int) {
        var calls = 0
        let pairs = (0 ..< 12).map { ("name\($0)", String(repeating: "x", count: $0)) }
        let fields = HTTPFields.filled(expectingFields: expectedFields, bytes: expectedBytes) { writer in
            calls += 1
            offer(pairs, to: &writer)
        }
        #expect(calls == 2)
        #expect(fields.map(\.name) == pairs.map(\.0))
        #expect(fields.map(\.value) == pairs.map(\.1))
    }

    @Test func lowercasingCopiesNamesWithASCIILettersLowered() {
        let fields = HTTPFields.filled(fields: 1, bytes: 32) { writer in
            _ = Array("X-Session-ID_9ü".utf8).withUnsafeBytes {
                writer.append(name: $0, value: nil, lowercasingName: true)
            }
        }
        #expect(fields.map(\.name) == ["x-session-id_9ü"])
    }
}

@Suite("ASCII lowercasing eight bytes at a time")
struct ASCIILowercasingTests {
    @Test func everyByteValueInEveryPositionOfAWordIsLoweredLikeTheByteRule() {
        for position in 0 ..< 8 {
            for value in 0 ... 255 {
                let word = UInt64(0x5A41_7A61_405B_6080) ^ (UInt64(value) << (8 * position))  // neighbours on the edges
                let lowered = asciiLowercased(word: word)
                for byte in 0 ..< 8 {
                    let original = UInt8(truncatingIfNeeded: word >> (8 * byte))
                    #expect(UInt8(truncatingIfNeeded: lowered >> (8 * byte)) == asciiLowercased(original))
                }
            }
        }
    }

    @Test(arguments: 0 ... 40)
    func copiesOfEveryLengthMatchTheByteRule(length: Int) {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("AZaz@[`{09-_ÄÖ\u{7f}".utf8)
        let source = (0 ..< length).map { _ in alphabet.randomElement(using: &generator)! }
        var target = [UInt8](repeating: 0xEE, count: length + 8)
        source.withUnsafeBytes { source in
            target.withUnsafeMutableBytes { target in
                copyASCIILowercased(
                    from: source.baseAddress ?? UnsafeRawPointer(bitPattern: 8)!, to: target.baseAddress!, count: length
                )
            }
        }
        #expect(Array(target[..<length]) == source.map(asciiLowercased))
        #expect(target[length...].allSatisfy { $0 == 0xEE })  // nothing written past the end
    }
}

@Suite("HTTPRequest: the path kept as bytes")
struct HTTPRequestPathTests {
    @Test func thePathReadsBackAsGiven() {
        var request = HTTPRequest(method: "GET", path: "/groups/ü-1/toggle")
        #expect(request.path == "/groups/ü-1/toggle")
        request.path = "/rows"
        #expect(request.path == "/rows")
    }

    @Test(arguments: [
        ("/rows", "/rows", true), ("/rows", "/rowsx", false), ("/rowsx", "/rows", false),
        ("/", "", false), ("", "", true), ("/Rows", "/rows", false)
    ])
    func pathIsComparesBytesExactly(path: String, text: String, equal: Bool) {
        #expect(HTTPRequest(method: "GET", path: path).path(is: text) == equal)
    }
}
