import Foundation
import MenuApp
import MenuAppTestSupport
import MenuSessions
import MenuTestSupport
import Testing

extension AppTests {
    /// Clients that try to fill the server's memory with sessions, over a real server with a small
    /// `--session-memory`: a session too large for the per-session cap is refused with 409 and not
    /// created; a flood of large sessions is held under the budget and then refused with 429 and
    /// Retry-After; a flood of toggles on one session stops at its cap; the server goes on serving.
    @Suite("Hostile input: sessions that would fill the server's memory")
    struct HostileSessionMemoryTests {
        /// A server on a ``wideMenu(groups:)`` of 4,000 groups with 1 MiB for sessions: one session
        /// may hold about 14 KB of state, about 900 expanded groups.
        private static func server() throws -> (LiveServer, path: String) {
            let path = try writeWideMenuFile(groups: 4_000)
            let server = try LiveServer { settings in
                settings.configPath = path
                settings.sessionMemory = 1 << 20
            }
            return (server, path)
        }

        private static func body(expanding range: Range<Int>) -> [UInt8] {
            Array((#"{"expanded":["# + range.map { "\"g\($0)\"" }.joined(separator: ",") + "]}").utf8)
        }

        private static func metric(_ name: String, of connection: LiveRawConnection) throws -> Int? {
            let page = try connection.request("GET", "/metrics").text
            let line = page.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            return line.flatMap { Int($0.split(separator: " ")[1]) }
        }

        @Test
        func aSessionOverTheCapIsRefusedWith409AndNotCreated() throws {
            let (server, path) = try Self.server()
            defer {
                server.shutdown()
                try? FileManager.default.removeItem(atPath: path)
            }
            let connection = try server.connect()
            let refused = try connection.request("POST", "/sessions", body: Self.body(expanding: 0 ..< 2_000))
            #expect(refused.status == 409)
            #expect(try refused.json()["error"]?["code"]?.stringValue == "session_too_large")
            #expect(refused.header("X-Session-Id") == nil)
            #expect(try Self.metric("menu_sessions_live", of: connection) == 0)
            #expect(try Self.metric("menu_session_bytes", of: connection) == 0)
            #expect(try connection.request("POST", "/sessions", body: Self.body(expanding: 0 ..< 100)).status == 201)
        }

        @Test
        func aFloodOfLargeSessionsStaysUnderTheBudgetThenGets429WithRetryAfter() throws {
            let (server, path) = try Self.server()
            defer {
                server.shutdown()
                try? FileManager.default.removeItem(atPath: path)
            }
            let connection = try server.connect()
            var created = 0
            var refusal: LiveResponse?
            for round in 0 ..< 400 where refusal == nil {  // 1 MiB holds fewer than 200 of them
                let start = (round * 37) % 3_000
                let response = try connection.request(
                    "POST", "/sessions", body: Self.body(expanding: start ..< start + 500))
                if response.status == 201 { created += 1 } else { refusal = response }
            }
            let full = try #require(refusal)
            #expect(full.status == 429)
            #expect(try full.json()["error"]?["code"]?.stringValue == "session_memory_full")
            #expect(full.header("Retry-After").flatMap(Int.init).map { (3500 ... 3600).contains($0) } == true)
            #expect(created > 20)
            let bytes = try #require(try Self.metric("menu_session_bytes", of: connection))
            #expect(bytes > 0)
            #expect(bytes <= 1 << 20)
            #expect(try Self.metric("menu_session_memory_budget_bytes", of: connection) == 1 << 20)
            #expect(try Self.metric("menu_sessions_live", of: connection) == created)
            #expect(try connection.request("GET", "/healthz").status == 200)
        }

        @Test
        func aFloodOfTogglesOnOneSessionStopsAtItsCapWith409() throws {
            let (server, path) = try Self.server()
            defer {
                server.shutdown()
                try? FileManager.default.removeItem(atPath: path)
            }
            let connection = try server.connect()
            let id = try #require(try connection.request("POST", "/sessions").header("X-Session-Id"))
            var refusal: LiveResponse?
            for group in 0 ..< 4_000 where refusal == nil {
                let response = try connection.request(
                    "POST", "/groups/g\(group)/toggle", headers: [("X-Session-Id", id)])
                if response.status != 200 { refusal = response }
            }
            let capped = try #require(refusal)
            #expect(capped.status == 409)
            #expect(try capped.json()["error"]?["code"]?.stringValue == "session_too_large")
            #expect(try Self.metric("menu_session_bytes", of: connection).map { $0 <= (1 << 20) / 64 } == true)
            let reset = try connection.request(
                "PUT", "/expansion", headers: [("X-Session-Id", id)], body: Array(#"{"all":"default"}"#.utf8))
            #expect(reset.status == 200, "\(reset.text)")
        }
    }
}
