import HTTPCore
import HTTPTestSupport
import MenuAppTestSupport
import Testing

extension AppTests {
    /// `X-Request-Id` is client input: a sane one (1 to 128 bytes of printable ASCII without space)
    /// is echoed; anything else is replaced by a made id, and never refused, never echoed, never a 5xx.
    @Suite("Hostile: X-Request-Id")
    struct HostileRequestIDTests {
        static let hostile: [(label: String, value: [UInt8])] = [
            ("129 bytes", Array(repeating: UInt8(ascii: "a"), count: 129)),
            ("10 000 bytes", Array(repeating: UInt8(ascii: "z"), count: 10_000)),
            ("a space inside", Array("two words".utf8)),
            ("a tab inside", Array("tab\there".utf8)),
            ("DEL", Array("del\u{7F}".utf8)),
            ("a NUL byte", [UInt8(ascii: "n"), 0, UInt8(ascii: "l")]),
            ("obs-text", [0x80, 0xFF, 0xC3, 0xA9]),
            ("UTF-8", Array("麻婆豆腐".utf8)),
            ("a log line break attempt", Array("x\\nmenu-server: forged".utf8) + [0x0B]),
            ("empty", [])
        ]

        @Test(arguments: hostile.indices)
        func aBadRequestIDIsReplacedByAMadeOne(index: Int) throws {
            let (label, value) = Self.hostile[index]
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            try connection.send(
                Array("GET /count HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: ".utf8) + value + Array("\r\n\r\n".utf8))
            let response = try connection.readResponse()
            #expect(response.status == 200 || (400 ..< 500).contains(response.status), "\(label): \(response.status)")
            let echoed = try #require(response.header("X-Request-Id"), "\(label): no X-Request-Id on the answer")
            let made = RequestID.isMade(echoed)
            // libmicrohttpd ends a header value at a NUL byte: the server sees (and may echo) only the part before it.
            let beforeNUL = value.contains(0) && Array(echoed.utf8) == Array(value.prefix { $0 != 0 })
            #expect(made || beforeNUL, "\(label): \(echoed) is not a made id")
            #expect(Array(echoed.utf8) != value && RequestID.isSane(echoed))
            #expect(try connection.request("GET", "/healthz").status == 200, "\(label): the connection still serves")
        }

        @Test func aSaneRequestIDUpToTheLimitIsEchoedAndTheFirstOfTwoWins() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let longest = String((0 ..< RequestID.maxLength).map { Character(UnicodeScalar(0x21 + UInt8($0 % 94))) })
            #expect(
                try connection.request("GET", "/rows", headers: [("X-Request-Id", longest)]).header("X-Request-Id")
                    == longest)
            let two = try connection.request(
                "GET", "/rows", headers: [("X-Request-Id", "first"), ("X-Request-Id", "second")])
            #expect(two.header("X-Request-Id") == "first")
            let made = try connection.request("GET", "/rows").header("X-Request-Id") ?? ""
            let again = try connection.request("GET", "/rows").header("X-Request-Id") ?? ""
            #expect(RequestID.isSane(made) && made != again, "made ids differ from request to request")
        }
    }
}
