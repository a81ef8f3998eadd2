// Hostile session headers against the real server over raw sockets: `GET`, `HEAD` and
// `DELETE /session` take the session only from `X-Session-Id`, and the old path form
// `/sessions/{id}` is answered `404 moved`. Missing, malformed, repeated, mangled, huge and
// control-laden headers, and hostile old-form paths, each get a 4xx, create no session, delete
// none, and the server goes on serving (HostileInputTests.expectRefusedWithoutChange).

import Foundation
import Testing

extension HostileCase {
    static let sessionHeaders: [HostileCase] = {
        let h = host
        let unknown = "AAAAAAAAAAAAAAAAAAAAAA"
        return [
            text("GET /session without X-Session-Id", .json(400, "missing_session")) {
                "GET /session HTTP/1.1\r\n\(h)\r\n"
            },
            text("DELETE /session without X-Session-Id", .json(400, "missing_session")) {
                "DELETE /session HTTP/1.1\r\n\(h)\r\n"
            },
            text(
                "DELETE /session with an empty X-Session-Id", .json(400, "invalid_session"),
                .json(400, "missing_session")
            ) {
                "DELETE /session HTTP/1.1\r\n\(h)X-Session-Id: \r\n\r\n"
            },
            text("DELETE /session with X-Session-Id ..", .json(400, "invalid_session")) {
                "DELETE /session HTTP/1.1\r\n\(h)X-Session-Id: ..\r\n\r\n"
            },
            text("GET /session with a path traversal as X-Session-Id", .json(400, "invalid_session")) {
                "GET /session HTTP/1.1\r\n\(h)X-Session-Id: ../../etc/passwd\r\n\r\n"
            },
            text("GET /session with a 10 KB X-Session-Id", .json(400, "invalid_session"), .mhd(431)) {
                "GET /session HTTP/1.1\r\n\(h)X-Session-Id: \(String(repeating: "A", count: 10_000))\r\n\r\n"
            },
            text(
                "DELETE /session with a control byte in X-Session-Id", .json(400, "invalid_session"),
                .json(400, "bad_request"), .mhd(400), .closed
            ) {
                "DELETE /session HTTP/1.1\r\n\(h)X-Session-Id: AAAAAAAAAAA\u{1}AAAAAAAAAA\r\n\r\n"
            },
            bytes(
                "DELETE /session with invalid UTF-8 in X-Session-Id", .json(400, "invalid_session"),
                .json(400, "bad_request"), .mhd(400), .closed
            ) {
                Array("DELETE /session HTTP/1.1\r\n\(h)X-Session-Id: AAAAAAAAAAAAAAAAAAAA".utf8) + [0xC0, 0xAE]
                    + Array("\r\n\r\n".utf8)
            },
            text("DELETE /session with two X-Session-Id headers that differ", .json(400, "invalid_session")) {
                "DELETE /session HTTP/1.1\r\n\(h)X-Session-Id: \(unknown)\r\nX-Session-Id: BAAAAAAAAAAAAAAAAAAAAA\r\n\r\n"
            },
            text("DELETE /session with two ids in one X-Session-Id", .json(400, "invalid_session")) {
                "DELETE /session HTTP/1.1\r\n\(h)X-Session-Id: \(unknown), BAAAAAAAAAAAAAAAAAAAAA\r\n\r\n"
            },
            text(
                "DELETE /session with a space before the colon of X-Session-Id", .json(400, "invalid_session"),
                .json(400, "bad_request")
            ) {
                "DELETE /session HTTP/1.1\r\n\(h)X-Session-Id : \(unknown)\r\n\r\n"
            },
            text(
                "DELETE /session with X-Session-Id folded onto a continuation line", .json(400, "invalid_session"),
                .json(400, "bad_request")
            ) {
                "DELETE /session HTTP/1.1\r\n\(h)X-Session-Id:\r\n \(unknown)\r\n\r\n"
            },
            text(
                "DELETE /session with an X-Session-Id-Extra header only", .json(400, "invalid_session"),
                .json(400, "missing_session")
            ) {
                "DELETE /session HTTP/1.1\r\n\(h)X-Session-Id-Extra: \(unknown)\r\n\r\n"
            },
            text("DELETE /session naming an unknown session in lowercase x-session-id", .json(404, "unknown_session")) {
                "DELETE /session HTTP/1.1\r\n\(h)x-session-id: \(unknown)\r\n\r\n"
            },
            text(
                "GET /session with a malformed If-None-Match", .json(400, "invalid_parameter"),
                .json(400, "bad_request"), .json(404, "unknown_session")
            ) {
                "GET /session HTTP/1.1\r\n\(h)X-Session-Id: \(unknown)\r\nIf-None-Match: \"a\" \"b\r\n\r\n"
            },
            text("DELETE /session with the id in the query", .json(400, "invalid_parameter")) {
                "DELETE /session?id=\(unknown) HTTP/1.1\r\n\(h)\r\n"
            },
            // The old path form: never served, whatever it holds.
            text("DELETE /sessions/{id}, the old form", .json(404, "moved")) {
                "DELETE /sessions/\(unknown) HTTP/1.1\r\n\(h)\r\n"
            },
            text("GET /sessions/ with path traversal", .json(404, "moved")) {
                "GET /sessions/..%2F..%2Fetc%2Fpasswd HTTP/1.1\r\n\(h)\r\n"
            },
            text("GET /sessions/ with a NUL in the id", .json(404, "moved")) {
                "GET /sessions/AAAAAAAAAAA%00AAAAAAAAAA HTTP/1.1\r\n\(h)\r\n"
            },
            text("GET /sessions/ with a 10 KB id", .json(404, "moved"), .mhd(414), .mhd(431)) {
                "GET /sessions/\(String(repeating: "A", count: 10_000)) HTTP/1.1\r\n\(h)\r\n"
            }
        ]
    }()
}

extension AppTests {
    @Suite("Hostile input: session headers and the old session path")
    struct HostileSessionHeaderTests {
        @Test(arguments: HostileCase.sessionHeaders)
        func aHostileSessionRequestGets4xxCreatesNoSessionAndDeletesNone(_ hostile: HostileCase) async throws {
            try await HostileInputTests.expectRefusedWithoutChange(hostile)
        }
    }
}
