import Foundation
import MenuApp
import MenuAppTestSupport
import MenuModel
import MenuService
import MenuTestSupport
import Testing

extension AppTests {
    /// Hostile `Authorization` fields on the admin listener, over a raw socket: each is answered
    /// with a JSON 400, 401 or 429 (or libmicrohttpd's own 400/431 for what it cannot frame),
    /// never a 5xx, never a reload; and the server goes on serving both ports.
    @Suite("Hostile input: the admin API's Authorization")
    struct HostileAdminTests {
        static let token = LiveAdminTests.token

        static let cases: [HostileCase] = {
            let head = "POST /admin/reload HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
            let refused: [HostileCase.Outcome] = [
                .json(400, "invalid_request"), .json(401, "invalid_token"), .json(429, "too_many_failures")
            ]
            func text(_ name: String, _ extra: HostileCase.Outcome..., request: @escaping @Sendable () -> String)
                -> HostileCase
            {
                HostileCase(name, refused + extra) { Array(request().utf8) }
            }
            return [
                text("Bearer and 8000 bytes of token", .mhd(431)) {
                    "\(head)Authorization: Bearer \(String(repeating: "a", count: 8000))\r\n\r\n"
                },
                text("Bearer and 600 bytes of token") {
                    "\(head)Authorization: Bearer \(String(repeating: "a", count: 600))\r\n\r\n"
                },
                // libmicrohttpd ends a field's value at a NUL: what follows is never read as the token.
                text("a wrong token, a NUL, the token", .mhd(400), .closed) {
                    "\(head)Authorization: Bearer wrong-0123456789abcdef\u{0}\(token)\r\n\r\n"
                },
                text("the token and a control byte") { "\(head)Authorization: Bearer \(token)\u{7}\r\n\r\n" },
                text("the token in UTF-8 lookalikes") {
                    "\(head)Authorization: Bearer аdmin-token-0123456789abcdef\r\n\r\n"
                },
                text("the token as a prefix of a longer one") { "\(head)Authorization: Bearer \(token)x\r\n\r\n" },
                text("the token cut short") { "\(head)Authorization: Bearer \(token.dropLast())\r\n\r\n" },
                text("Bearer with a tab") { "\(head)Authorization: Bearer\t\(token)\r\n\r\n" },
                text("the scheme only") { "\(head)Authorization: Bearer\r\n\r\n" },
                text("an empty field", .json(401, "unauthorized")) { "\(head)Authorization:\r\n\r\n" },
                text("Basic with the token") { "\(head)Authorization: Basic \(token)\r\n\r\n" },
                text("two tokens") { "\(head)Authorization: Bearer \(token), Bearer \(token)\r\n\r\n" },
                text("padding in the middle") { "\(head)Authorization: Bearer ab==cd0123456789abcdef\r\n\r\n" },
                text("the field on 100 lines", .mhd(431)) {
                    head + String(repeating: "Authorization: Bearer wrong-0123456789abcdef\r\n", count: 100) + "\r\n"
                },
                HostileCase("invalid UTF-8 in the token", refused + [.mhd(400)]) {
                    Array("\(head)Authorization: Bearer admin-".utf8) + [0xFF, 0xC0, 0x80] + Array("\r\n\r\n".utf8)
                }
            ]
        }()

        @Test
        func everyHostileAuthorizationIsRefusedAndNothingIsReloaded() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("admin-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let (server, adminPort, config, _) = try LiveAdminTests.start(directory)
            defer { server.shutdown() }
            try ReloadMenus.write(generation: 2, to: config.path)  // a reload would serve it
            let version = server.server.service.menu.version
            for hostile in Self.cases {
                let reply = try await hostileOnThread { try hostileExchange(port: adminPort, hostile.make()) }
                let problems = hostile.problems(in: reply)
                #expect(problems.isEmpty, "\(hostile.name): \(problems)")
            }
            #expect(server.server.service.menu.version == version, "a hostile request reloaded the menu")
            #expect(try server.connect().request("GET", "/count").status == 200)
            // The admin port still answers: 401, or 429 while this address's failed attempts
            // (more than ten, at whatever pace the machine sent them) have not refilled.
            let after = try LiveRawConnection(port: adminPort).request("POST", "/admin/reload")
            #expect([401, 429].contains(after.status), "\(after)")
        }
    }
}

extension AppTests {
    /// Hostile availability batches with a good token, over a raw socket: each is a JSON 400
    /// naming what is wrong (or 413 past the body limit, or libmicrohttpd's own 400 for what it
    /// cannot frame), never a 5xx; none changes the overlay; the server goes on serving.
    @Suite("Hostile input: the admin API's availability batch")
    struct HostileAvailabilityTests {
        static let cases: [HostileCase] = {
            let token = LiveAdminTests.token
            let refused: [HostileCase.Outcome] = [
                .json(400, "invalid_body"), .json(400, "unknown_node"), .json(400, "invalid_batch")
            ]
            func body(_ name: String, _ extra: HostileCase.Outcome..., bytes: @escaping @Sendable () -> [UInt8])
                -> HostileCase
            {
                HostileCase(name, refused + extra) {
                    let payload = bytes()
                    return Array(
                        "PUT /admin/availability HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Length: \(payload.count)\r\n\r\n"
                            .utf8) + payload
                }
            }
            func text(_ name: String, _ extra: HostileCase.Outcome..., json: String) -> HostileCase {
                HostileCase(name, refused + extra) {
                    Array(
                        "PUT /admin/availability HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)"
                            .utf8)
                }
            }
            let dish = #""id": "mapo-tofu""#
            /// A change pausing the dish with `key` set to the JSON `value`.
            func paused(_ name: String, _ key: String, _ value: String) -> HostileCase {
                text(name, json: #"{"changes": [{\#(dish), "state": "paused", "\#(key)": \#(value)}]}"#)
            }
            return [
                text("an empty body", json: ""),
                text("null", json: "null"),
                text("an array", json: "[]"),
                text("changes as an object", json: #"{"changes": {}}"#),
                text("changes nested 20,000 deep", json: #"{"changes": "# + String(repeating: "[", count: 20_000)),
                text("a key twice", json: #"{"changes": [{\#(dish), \#(dish), "state": "paused"}]}"#),
                text("changes twice", json: #"{"changes": [], "changes": [{\#(dish), "state": "paused"}]}"#),
                text(
                    "one id twice",
                    json: #"{"changes": [{\#(dish), "state": "paused"}, {\#(dish), "state": "sold_out"}]}"#),
                text("a state in capitals", json: #"{"changes": [{\#(dish), "state": "SOLD_OUT"}]}"#),
                text("a number for the state", json: #"{"changes": [{\#(dish), "state": 1}]}"#),
                text("an id with a space", json: #"{"changes": [{"id": "mapo tofu", "state": "paused"}]}"#),
                text(
                    "an id of 10,000 bytes",
                    json: #"{"changes": [{"id": "\#(String(repeating: "a", count: 10_000))", "state": "paused"}]}"#),
                text(
                    "1,500 unknown ids",
                    json: #"{"changes": ["#
                        + (0 ..< 1_500).map { #"{"id": "x\#($0)", "state": "paused"}"# }.joined(separator: ",") + "]}"),
                paused("a time on 30 February", "until", #""2999-02-30T00:00:00Z""#),
                paused("a time in year 10000", "until", #""10000-01-01T00:00:00Z""#),
                paused("a time past 9999 by its offset", "until", #""9999-12-31T23:59:59-23:59""#),
                paused("a time as a number", "until", #"1e999"#),
                paused("a time in the past", "until", #""1970-01-01T00:00:00Z""#),
                text(
                    "until for available",
                    json: #"{"changes": [{\#(dish), "state": "available", "until": "2999-01-01T00:00:00Z"}]}"#),
                paused("a reason with an escaped bell", "reason", #""a\u0007b""#),
                paused("a reason with an escaped escape", "reason", #""\u001b[2J""#),
                text(
                    "a reason of 201 bytes",
                    json:
                        #"{"changes": [{\#(dish), "state": "paused", "reason": "\#(String(repeating: "r", count: 201))"}]}"#
                ),
                paused("a reason with a lone surrogate", "reason", #""\ud800""#),
                text(
                    "an unknown key",
                    json: #"{"changes": [{\#(dish), "state": "paused", "untill": "2999-01-01T00:00:00Z"}]}"#),
                body("a NUL in the id") {
                    Array(#"{"changes": [{"id": "mapo"#.utf8) + [0] + Array(#"-tofu", "state": "paused"}]}"#.utf8)
                },
                body("invalid UTF-8 in the reason") {
                    Array(#"{"changes": [{"id": "mapo-tofu", "state": "paused", "reason": ""#.utf8) + [0xFF, 0xC0, 0x80]
                        + Array(#""}]}"#.utf8)
                },
                body("a body over the limit", .json(413, "payload_too_large"), .closed) {
                    Array(#"{"changes": [], "pad": ""#.utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 70_000)
                        + Array(#""}"#.utf8)
                }
            ]
        }()

        @Test
        func everyHostileBatchIsRefusedWithAJSONErrorAndChangesNothing() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("admin-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let (server, adminPort, _, _) = try LiveAdminTests.start(directory)
            defer { server.shutdown() }
            for hostile in Self.cases {
                let reply = try await hostileOnThread { try hostileExchange(port: adminPort, hostile.make()) }
                let problems = hostile.problems(in: reply)
                #expect(problems.isEmpty, "\(hostile.name): \(problems)")
            }
            #expect(server.server.service.availabilityEntries().revision == 0, "a hostile batch changed the overlay")
            #expect(try server.connect().request("GET", "/count").status == 200)
            let after = try LiveRawConnection(port: adminPort).request(
                "GET", "/admin/availability", headers: [("Authorization", "Bearer \(LiveAdminTests.token)")])
            #expect(after.status == 200)
        }
    }
}
