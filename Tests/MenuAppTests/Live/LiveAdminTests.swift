import AdminAccess
import Foundation
import HTTPCore
import HTTPServer
import MenuApp
import MenuAppTestSupport
import MenuModel
import MenuService
import MenuTestSupport
import Metrics
import Testing

extension AppTests {
    /// The admin API of a real server (issue 27 §1): on its own listener only, every request
    /// authenticated by a bearer token of the token file, failed attempts limited per address,
    /// tokens rotated by editing the file, `POST /admin/reload` serving a new menu.
    @Suite("Live: the admin API")
    struct LiveAdminTests {
        static let token = "admin-token-0123456789abcdef"

        /// A server with an admin listener on a free port, its config and token file in `directory`
        /// (the hostile suite's too).
        static func start(_ directory: URL) throws -> (LiveServer, admin: Int, config: URL, tokens: URL) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let config = directory.appendingPathComponent("menu.json")
            try ReloadMenus.write(generation: 1, to: config.path)
            let tokens = directory.appendingPathComponent("tokens")
            try Data("# the kitchen's tablet\n\(token)\n".utf8).write(to: tokens)
            let server = try LiveServer {
                $0.configPath = config.path
                $0.adminListen = ListenAddress("127.0.0.1:0")
                $0.adminTokenFile = tokens.path
            }
            return (server, try #require(server.server.adminPort), config, tokens)
        }

        private static func reload(_ connection: LiveRawConnection, token: String?) throws -> LiveResponse {
            try connection.request(
                "POST", "/admin/reload", headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [])
        }

        @Test func withoutAGoodTokenNothingIsDoneAndTheAnswerSaysHowToAuthenticate() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("admin-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let (server, adminPort, config, _) = try Self.start(directory)
            defer { server.shutdown() }
            let admin = try LiveRawConnection(port: adminPort)
            try ReloadMenus.write(generation: 2, to: config.path)
            let before = server.server.service.menu.version

            let missing = try Self.reload(admin, token: nil)
            try liveExpectError(missing, status: 401, code: "unauthorized")
            #expect(missing.header("WWW-Authenticate") == "Bearer realm=\"menu-server admin\"")
            let wrong = try Self.reload(admin, token: "not-the-token-0123456789")
            try liveExpectError(wrong, status: 401, code: "invalid_token")
            #expect(wrong.header("WWW-Authenticate")?.contains("error=\"invalid_token\"") == true)
            let basic = try admin.request("POST", "/admin/reload", headers: [("Authorization", "Basic \(Self.token)")])
            try liveExpectError(basic, status: 400, code: "invalid_request")
            // Routes are not told to whoever has no token.
            try liveExpectError(try admin.request("GET", "/admin/nothing"), status: 401, code: "unauthorized")
            #expect(server.server.service.menu.version == before, "nothing was reloaded")

            // The main port has no admin route, whatever the token.
            let main = try server.connect()
            let publicTry = try main.request(
                "POST", "/admin/reload", headers: [("Authorization", "Bearer \(Self.token)"), ("Origin", "https://x")])
            try liveExpectError(publicTry, status: 404, code: "not_found")
            #expect(server.server.service.menu.version == before)
        }

        @Test func aGoodTokenReloadsTheMenuAndTheAnswerAndTheLogSayWhatChanged() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("admin-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let (server, adminPort, config, _) = try Self.start(directory)
            defer { server.shutdown() }
            let admin = try LiveRawConnection(port: adminPort)
            let unchanged = try Self.reload(admin, token: Self.token)
            #expect(unchanged.status == 200)
            #expect(try unchanged.json()["reloaded"] == .bool(false))

            try ReloadMenus.write(generation: 2, to: config.path)
            let reloaded = try Self.reload(admin, token: Self.token)
            #expect(reloaded.status == 200, "\(reloaded)")
            let body = try reloaded.json()
            #expect(body["reloaded"] == .bool(true))
            #expect(body["version"]?.stringValue == ReloadMenus.menu(generation: 2).version)
            #expect(body["previousVersion"]?.stringValue == ReloadMenus.menu(generation: 1).version)
            #expect(
                try server.connect().request("GET", "/count").text.contains(ReloadMenus.menu(generation: 2).version))

            // A broken file is refused with its problems, and the menu stays.
            try Data(#"{"items":[{"id":"a b","title":""}]}"#.utf8).write(to: config)
            let refused = try Self.reload(admin, token: Self.token)
            try liveExpectError(refused, status: 422, code: "invalid_config")
            #expect(try refused.json()["error"]?["message"]?.stringValue?.contains("items[0].id") == true)
            #expect(server.server.service.menu.version == ReloadMenus.menu(generation: 2).version)
            try liveExpectError(
                try admin.request("GET", "/admin/reload", headers: [("Authorization", "Bearer \(Self.token)")]),
                status: 405, code: "method_not_allowed")

            let metrics = LiveMetrics(try server.connect().request("GET", "/metrics").text)
            #expect(metrics["menu_admin_requests_total{outcome=\"succeeded\"}"] == 2)
            #expect(metrics["menu_admin_requests_total{outcome=\"refused\"}"] == 1)
            #expect(metrics["menu_admin_requests_total{outcome=\"not_found\"}"] == 1)
        }

        @Test func aTokenIsRotatedByEditingTheFileWithNoRestart() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("admin-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let (server, adminPort, _, tokens) = try Self.start(directory)
            defer { server.shutdown() }
            let admin = try LiveRawConnection(port: adminPort)
            let next = "next-token-ABCDEFGHIJKLMNOP"
            try liveExpectError(try Self.reload(admin, token: next), status: 401, code: "invalid_token")
            // Both tokens while clients move over (a new file renamed over the old one).
            let staged = directory.appendingPathComponent("tokens.new")
            func install(_ text: String) throws {
                try Data(text.utf8).write(to: staged)
                try #require(rename(staged.path, tokens.path) == 0)
            }
            try install("\(Self.token)\n\(next)\n")
            #expect(try Self.reload(admin, token: next).status == 200)
            #expect(try Self.reload(admin, token: Self.token).status == 200)
            // Then only the new one.
            try install("\(next)\n")
            try liveExpectError(try Self.reload(admin, token: Self.token), status: 401, code: "invalid_token")
            #expect(try Self.reload(admin, token: next).status == 200)
            // A file broken by mistake keeps the tokens before it.
            try install("too-short\n")
            #expect(try Self.reload(admin, token: next).status == 200)
        }

        @Test func tenFailedAttemptsAMinuteFromOneAddressThenEvenAGoodTokenWaits() throws {
            // In process, on a clock the test moves: the limit is a rate, and the live server's
            // clock would refill the bucket on a slow machine.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("admin-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("tokens")
            try Data("\(Self.token)\n".utf8).write(to: file)
            let clock = ManualSessionClock()
            let reloads = LiveLocked(0)
            let api = AdminAPI(
                tokens: try AdminTokens(path: file.path),
                failures: SessionRateLimiter(perMinute: AdminAPI.failedAttemptsPerMinute, clock: clock.now),
                log: { _ in }
            ) {
                reloads.update { $0 += 1 }
                return .failure(.serverStopping)
            }
            let client = IPAddress("192.0.2.7")!
            func reload(_ token: String?) -> HTTPResponse {
                api.respond(
                    to: HTTPRequest(
                        method: "POST", path: "/admin/reload",
                        headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [], peerAddress: client))
            }
            // Asking with no token is not a guess: it does not count.
            for _ in 0 ..< 20 { #expect(reload(nil).status == 401) }
            for attempt in 0 ..< AdminAPI.failedAttemptsPerMinute {
                #expect(reload("guess-\(attempt)-0123456789abcdef").status == 401)
            }
            let limited = reload(Self.token)
            #expect(limited.status == 429)
            #expect(limited.headers.first { $0.name == "Retry-After" }?.value == "6")
            #expect(reloads.value == 0, "the right token waits too")
            // Another address is not limited.
            let other = api.respond(
                to: HTTPRequest(
                    method: "POST", path: "/admin/reload", headers: [("Authorization", "Bearer \(Self.token)")],
                    peerAddress: IPAddress("192.0.2.8")!))
            #expect(other.status == 422 && reloads.value == 1)
            // A token a 6 s: one more attempt.
            clock.advance(milliseconds: 6_000)
            #expect(reload(Self.token).status == 422)
            #expect(reload("guess-again-0123456789abcdef").status == 401)
            #expect(reload(Self.token).status == 429)
            var metrics = PrometheusText()
            api.writeMetrics(to: &metrics)
            let figures = LiveMetrics(metrics.text)
            #expect(figures["menu_admin_requests_total{outcome=\"limited\"}"] == 2)
            #expect(figures["menu_admin_requests_total{outcome=\"unauthorized\"}"] == 31)
        }

        @Test func aTokenFileThatCannotBeUsedStopsTheStartNamingTheLine() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("admin-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let tokens = directory.appendingPathComponent("tokens")
            try Data("\(Self.token)\nshort-secret\n".utf8).write(to: tokens)
            do {
                _ = try LiveServer {
                    $0.adminListen = ListenAddress("127.0.0.1:0")
                    $0.adminTokenFile = tokens.path
                }
                Issue.record("the server started")
            } catch {
                let message = "\(error)"
                #expect(message.contains("\(tokens.path), line 2"), "\(message)")
                #expect(!message.contains("short-secret"))
            }
        }
    }
}
