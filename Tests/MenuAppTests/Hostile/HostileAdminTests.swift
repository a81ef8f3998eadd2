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
