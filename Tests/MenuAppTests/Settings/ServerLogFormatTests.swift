import Testing

@testable import MenuApp

extension AppTests {
    /// The exact bytes of a log line, text and JSON: the writer builds them byte by byte, so every
    /// field's digits, padding and escaping are pinned here.
    @Suite("Server log: the exact line formats")
    struct ServerLogFormatTests {
        /// 2026-03-04T05:06:07.089Z, and a request that took 12,345 ns.
        private let record = ServerLog.RequestRecord(
            wallNanoseconds: 1_772_600_767_089_999_999, method: "GET", route: 0, status: 304,
            durationNanoseconds: 12_345, bytes: 0, requestID: "req-1")

        private func line(_ entry: ServerLog.Entry, _ format: LogFormat) -> String {
            var bytes: [UInt8] = []
            ServerLog.write([entry], format: format, to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }

        @Test func aRequestLineInText() {
            let route = MenuMetrics.routeLabels[0]
            #expect(
                line(.request(record), .text)
                    == "menu-server: time=2026-03-04T05:06:07.089Z method=GET route=\(route) status=304 duration_us=12.3 bytes=0 request_id=req-1\n"
            )
        }

        @Test func aRequestLineInJSON() {
            let route = MenuMetrics.routeLabels[0]
            #expect(
                line(.request(record), .json)
                    == "{\"time\":\"2026-03-04T05:06:07.089Z\",\"level\":\"info\",\"method\":\"GET\",\"route\":\"\(route)\",\"status\":304,\"duration_us\":12.3,\"bytes\":0,\"request_id\":\"req-1\"}\n"
            )
        }

        /// A client's X-Request-Id may hold a quote (any printable ASCII but a space): a text line
        /// shows `?` so a logfmt reader is not thrown off, the JSON line escapes it.
        @Test func aQuoteInARequestIDIsKeptOutOfATextLine() {
            let quoted = ServerLog.RequestRecord(
                wallNanoseconds: 0, method: "GET", route: 0, status: 200, durationNanoseconds: 0, bytes: 1,
                requestID: "a\"b")
            #expect(line(.request(quoted), .text).hasSuffix(" request_id=?\n"))
            #expect(line(.request(quoted), .json).hasSuffix(",\"request_id\":\"a\\\"b\"}\n"))
        }

        /// The date and time of a second are formatted once for the lines of that second: a drain
        /// whose lines cross seconds (and go back, as a clock set back does) shows each its own.
        @Test func linesOfOneDrainShowEachItsOwnSecond() {
            let times = [1_772_600_767_089_999_999, 1_772_600_767_999_000_000, 1_772_600_768_000_000_000, 0]
            var bytes: [UInt8] = []
            ServerLog.write(
                times.map { .event(level: .info, wallNanoseconds: $0, message: "m") }, format: .json, to: &bytes)
            let stamps = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map {
                $0.dropFirst(9).prefix(24)
            }
            #expect(
                stamps == [
                    "2026-03-04T05:06:07.089Z", "2026-03-04T05:06:07.999Z", "2026-03-04T05:06:08.000Z",
                    "1970-01-01T00:00:00.000Z"
                ])
        }

        @Test func anEventLineInJSONEscapesItsMessage() {
            #expect(
                line(.event(level: .warn, wallNanoseconds: 0, message: "a \"b\"\n"), .json)
                    == "{\"time\":\"1970-01-01T00:00:00.000Z\",\"level\":\"warn\",\"message\":\"a \\\"b\\\"\\u000a\"}\n"
            )
        }

        @Test(arguments: [
            (0, 1, "0"), (7, 3, "007"), (-42, 1, "-42"), (Int.max, 1, "9223372036854775807"),
            (Int.min, 1, "-9223372036854775808"), (123, 2, "123"), (9, 1, "9"), (10, 1, "10"),
            (999_999_999_999_999_999, 1, "999999999999999999"), (1_000_000_000_000_000_000, 1, "1000000000000000000"),
            (5, 20, "00000000000000000005")
        ])
        func decimalsArePaddedToTheirWidth(value: Int, width: Int, text: String) {
            var bytes = [UInt8](repeating: 0, count: 32)
            let count = bytes.withUnsafeMutableBufferPointer { bytes in
                var line = ServerLog.LineWriter(bytes.baseAddress!)
                line.decimal(value, width: width)
                return line.count
            }
            #expect(String(decoding: bytes[..<count], as: UTF8.self) == text)
        }
    }
}
