import Foundation
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import Testing

extension AppTests {
    /// Hostile `Origin` and `Access-Control-Request-*` headers over a raw socket, against a server
    /// with `--cors-origin`: they are client input like any other. Each is answered (a preflight 204,
    /// a read 200, our JSON error, or libmicrohttpd's own page for bytes it refuses), never a 5xx;
    /// an `Access-Control-Allow-Origin` is only ever the listed origin (never the hostile text echoed),
    /// a malformed preflight gets no grant at all, and no session is created or changed.
    @Suite("Hostile input: CORS headers")
    struct HostileCORSTests {
        static let listed = "http://app.test:3000"

        /// One hostile request and what it may get: the statuses, and whether a grant may come back.
        struct Case: Sendable, CustomTestStringConvertible {
            let name: String
            let statuses: Set<Int>
            let mayGrant: Bool
            let request: @Sendable () -> [UInt8]
            var testDescription: String { name }
        }

        static func text(
            _ name: String, _ statuses: Set<Int>, mayGrant: Bool = false, _ head: @escaping @Sendable () -> String
        ) -> Case {
            Case(name: name, statuses: statuses, mayGrant: mayGrant) { Array((head() + "\r\n").utf8) }
        }

        static let cases: [Case] = {
            let preflight = "OPTIONS /groups/drinks/toggle HTTP/1.1\r\n\(HostileCase.host)"
            let read = "GET /count HTTP/1.1\r\n\(HostileCase.host)"
            let origin = "Origin: \(listed)\r\n"
            return [
                text("a preflight asking for an empty method", [204]) {
                    "\(preflight)\(origin)Access-Control-Request-Method: \r\n"
                },
                text("a preflight asking for a method with a space", [204]) {
                    "\(preflight)\(origin)Access-Control-Request-Method: PO ST\r\n"
                },
                text("a preflight asking for the method twice", [204]) {
                    "\(preflight)\(origin)Access-Control-Request-Method: POST\r\nAccess-Control-Request-Method: POST\r\n"
                },
                text("a preflight asking for OPTIONS", [204]) {
                    "\(preflight)\(origin)Access-Control-Request-Method: OPTIONS\r\n"
                },
                text("a preflight asking for a header with a space in it", [204]) {
                    "\(preflight)\(origin)Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: x session id\r\n"
                },
                text("a preflight asking for 10 000 headers", [204, 431]) {
                    "\(preflight)\(origin)Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: "
                        + Array(repeating: "x-session-id", count: 10_000).joined(separator: ",") + "\r\n"
                },
                text("a preflight asking for 65 different headers", [204]) {
                    "\(preflight)\(origin)Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: "
                        + (0 ..< 65).map { "x-h\($0)" }.joined(separator: ",") + "\r\n"
                },
                text("a preflight asking for only commas", [204], mayGrant: true) {
                    "\(preflight)\(origin)Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: , ,,\r\n"
                },
                Case(name: "a preflight asking for a header of obs-text bytes", statuses: [204, 400], mayGrant: false) {
                    Array(
                        "\(preflight)\(origin)Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: x-"
                            .utf8)
                        + [0xFF, 0xFE] + Array("\r\n\r\n".utf8)
                },
                text("a preflight from the listed origin with a path", [204]) {
                    "\(preflight)Origin: \(listed)/\r\nAccess-Control-Request-Method: POST\r\n"
                },
                text("a preflight from the listed origin plus a header line after it", [204], mayGrant: true) {
                    "\(preflight)\(origin)X-Injected: yes\r\nAccess-Control-Request-Method: POST\r\n"
                },
                text("a preflight from two origins", [204]) {
                    "\(preflight)\(origin)Origin: http://evil.test\r\nAccess-Control-Request-Method: POST\r\n"
                },
                text("a preflight from 1000 origins", [204, 431]) {
                    preflight + String(repeating: "Origin: http://evil.test\r\n\(origin)", count: 500)
                        + "Access-Control-Request-Method: POST\r\n"
                },
                text("a preflight from a 100 KB origin", [204, 431]) {
                    "\(preflight)Origin: \(listed)\(String(repeating: "a", count: 100_000))\r\nAccess-Control-Request-Method: POST\r\n"
                },
                text("a preflight on an unknown path", [404]) {
                    "OPTIONS /nope HTTP/1.1\r\n\(HostileCase.host)\(origin)Access-Control-Request-Method: GET\r\n"
                },
                text("a preflight on *", [404]) {
                    "OPTIONS * HTTP/1.1\r\n\(HostileCase.host)\(origin)Access-Control-Request-Method: GET\r\n"
                },
                // Not a preflight: the 405 of any other method, which the listed origin's page may read.
                text("an OPTIONS without Access-Control-Request-Method", [405], mayGrant: true) {
                    "\(preflight)\(origin)"
                },
                text("a read from an origin of control bytes", [200, 400]) {
                    "\(read)Origin: http://a\u{1}\u{7F}.test\r\n"
                },
                text("a read from an empty origin", [200]) { "\(read)Origin: \r\n" },
                text("a read from null", [200]) { "\(read)Origin: null\r\n" },
                text("a read from the listed origin in capitals", [200]) { "\(read)Origin: HTTP://APP.TEST:3000\r\n" },
                text("a read from the listed origin as a prefix", [200]) { "\(read)Origin: \(listed).evil.test\r\n" },
                text("a read from the listed origin with a trailing space", [200], mayGrant: true) {
                    "\(read)Origin: \(listed) \r\n"
                },
                text("a read from the listed origin", [200], mayGrant: true) { "\(read)\(origin)" }
            ]
        }()

        @Test
        func everyHostileCORSHeaderIsAnsweredWithoutA5xxOrAnEchoAndChangesNoSession() async throws {
            let server = try HostileInputTests.server { $0.corsOrigins = [Self.listed] }
            defer { server.shutdown() }
            let port = server.port
            let before = try await hostileOnThread { try HostileFixture.prepare(port: port) }
            var problems: [String] = []
            for hostile in Self.cases {
                let reply = try await hostileOnThread { try hostileExchange(port: port, hostile.request()) }
                guard let answer = HostileHTTP.parseAll(reply.bytes).responses.first else {
                    problems.append("\(hostile.name): no answer (closed: \(reply.closed))")
                    continue
                }
                if !hostile.statuses.contains(answer.status) {
                    problems.append("\(hostile.name): \(answer.status), expected \(hostile.statuses)")
                }
                let granted = answer.headers.filter { $0.name.lowercased().hasPrefix("access-control-allow") }
                if !hostile.mayGrant, !granted.isEmpty { problems.append("\(hostile.name): granted \(granted)") }
                let origins = answer.headers.filter { $0.name.lowercased() == "access-control-allow-origin" }.map(
                    \.value)
                if origins.contains(where: { $0 != Self.listed }) {
                    problems.append("\(hostile.name): allowed \(origins)")
                }
                if answer.headers.contains(where: { $0.name.lowercased() == "x-injected" }) {
                    problems.append("\(hostile.name): echoed a header")
                }
                if answer.status >= 400, answer.header("Content-Type") == "application/json; charset=utf-8" {
                    var format: [String] = []
                    _ = HostileCase.errorCode(answer, problems: &format)
                    problems += format.map { "\(hostile.name): \($0)" }
                }
            }
            #expect(problems.isEmpty, "\(problems)")
            let after = try await hostileOnThread { try before.reread(port: port) }
            #expect(after.rows == before.rows && after.count == before.count)
            #expect(HostileInputTests.sessionCount(server) == 1)
        }
    }
}
