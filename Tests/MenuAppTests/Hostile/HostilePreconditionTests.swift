import Testing

extension AppTests {
    /// Hostile `If-None-Match` and `If-Match` headers over a raw socket: each is refused with a 400
    /// naming the header (or, for bytes libmicrohttpd refuses itself, its page), never a 5xx, never
    /// read as "no precondition", and no write goes through.
    @Suite("Hostile input: malformed preconditions")
    struct HostilePreconditionTests {
        static let cases: [HostileCase] = {
            let h = HostileCase.host
            let toggle = "POST /groups/beer/toggle HTTP/1.1\r\n\(h)Content-Length: 0\r\n"
            let rows = "GET /rows HTTP/1.1\r\n\(h)"
            return [
                HostileCase.text("If-Match without quotes", .json(400, "invalid_parameter")) {
                    "\(toggle)If-Match: abc\r\n\r\n"
                },
                HostileCase.text("If-Match unterminated", .json(400, "invalid_parameter")) {
                    "\(toggle)If-Match: \"abc\r\n\r\n"
                },
                HostileCase.text("If-Match * in a list", .json(400, "invalid_parameter")) {
                    "\(toggle)If-Match: *, \"a\"\r\n\r\n"
                },
                HostileCase.text("If-Match tags without a comma", .json(400, "invalid_parameter")) {
                    "\(toggle)If-Match: \"a\"\"b\"\r\n\r\n"
                },
                HostileCase.text("If-Match lowercase w/", .json(400, "invalid_parameter")) {
                    "\(toggle)If-Match: w/\"a\"\r\n\r\n"
                },
                HostileCase.text("If-Match only commas", .json(400, "invalid_parameter")) {
                    "\(toggle)If-Match: , ,\r\n\r\n"
                },
                HostileCase.text("If-Match 10 000 tags", .json(400, "invalid_parameter"), .mhd(431)) {
                    "\(toggle)If-Match: \(Array(repeating: "\"t\"", count: 10_000).joined(separator: ","))\r\n\r\n"
                },
                HostileCase.text("If-Match a stale tag on a new session", .json(412, "precondition_failed")) {
                    "\(toggle)If-Match: \"x-1\"\r\n\r\n"
                },
                HostileCase.text("If-Match with a NUL", .json(400, "invalid_parameter"), .mhd(400), .closed) {
                    "\(toggle)If-Match: \"a\u{0}b\"\r\n\r\n"
                },
                HostileCase.bytes(
                    "If-Match with a DEL and obs-text", .json(400, "invalid_parameter"),
                    .json(412, "precondition_failed")
                ) {
                    Array("\(toggle)If-Match: \"a".utf8) + [0x7F, 0xFF] + Array("\"\r\n\r\n".utf8)
                },
                HostileCase.text("If-None-Match garbage on /rows", .json(400, "invalid_parameter")) {
                    "\(rows)If-None-Match: garbage\r\n\r\n"
                },
                HostileCase.text("If-None-Match 19-digit revision", .json(200, "")) {
                    "\(rows)If-None-Match: \"x-9999999999999999999\"\r\n\r\n"
                },
                HostileCase.text("If-None-Match split over two lines", .json(400, "invalid_parameter")) {
                    "\(rows)If-None-Match: \"a\r\nIf-None-Match: b\"\r\n\r\n"
                }
            ]
        }()

        @Test(arguments: cases)
        func aMalformedPreconditionIsRefusedAndChangesNoSession(_ hostile: HostileCase) async throws {
            try await HostileInputTests.expectRefusedWithoutChange(hostile)
        }
    }
}
