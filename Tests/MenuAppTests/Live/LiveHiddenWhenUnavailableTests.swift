import Foundation
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import RedisTestSupport
import Testing

extension AppTests {
    /// `"whenUnavailable": "hide"` on real servers (issue 27 §2): three instances on one Redis, an
    /// admin write on one. Every instance leaves the dish out of the same session's rows and
    /// count, on the same listing version; an open stream on another instance is told the splice;
    /// a write naming the hidden node is a 404 that says why; made available again, the dish is
    /// back everywhere and the session kept its state by id throughout.
    @Suite("Live: nodes hidden while unavailable")
    struct LiveHiddenWhenUnavailableTests {
        static let config = #"""
            {"items": [
              {"id": "mains", "title": "Mains", "expanded": true, "items": [
                {"id": "fish", "title": "Dry-braised fish", "whenUnavailable": "hide"},
                {"id": "tofu", "title": "Mapo tofu"},
                {"id": "specials", "title": "Specials", "whenUnavailable": "hide", "items": [
                  {"id": "eel", "title": "Eel"}, {"id": "crab", "title": "Crab"}]}]},
              {"id": "drinks", "title": "Drinks", "items": [{"id": "tea", "title": "Tea"}]}
            ]}
            """#

        private static func put(_ admin: LiveRawConnection, _ body: String) throws -> LiveResponse {
            try admin.request(
                "PUT", "/admin/availability",
                headers: [("Authorization", "Bearer \(LiveAdminTests.token)"), ("Content-Type", "application/json")],
                body: Array(body.utf8))
        }

        /// The ids of the session's rows and the answer's version, from `server`.
        private static func listing(_ server: LiveServer, _ session: String) throws -> (ids: [String], version: String?)
        {
            let page = try server.connect().request("GET", "/rows?limit=100", headers: [("X-Session-Id", session)])
                .json()
            let ids = (page["rows"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
            return (ids, page["version"]?.stringValue)
        }

        @Test func threeInstancesOnOneRedisLeaveAHiddenDishOutAndBringItBack() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hide-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = directory.appendingPathComponent("menu.json")
            try Data(Self.config.utf8).write(to: config)
            let tokens = directory.appendingPathComponent("tokens")
            try Data("\(LiveAdminTests.token)\n".utf8).write(to: tokens)
            let servers = try (0 ..< 3).map { _ in
                try LiveAvailabilityTests.start(config: config, tokens: tokens, on: redis)
            }
            defer { for server in servers { server.shutdown() } }
            let admin = try LiveRawConnection(port: try #require(servers[0].server.adminPort))

            let created = try servers[2].connect().request("POST", "/sessions")
            let session = try #require(try created.json()["sessionId"]?.stringValue)
            let opened = try servers[1].connect().request(
                "POST", "/groups/drinks/toggle", headers: [("X-Session-Id", session)])
            #expect(opened.status == 200, "\(opened)")
            let all = ["mains", "fish", "tofu", "specials", "drinks", "tea"]
            let published = try Self.listing(servers[0], session)
            #expect(published.ids == all)
            let stream = try LiveEventStream(
                port: servers[2].port, "/changes?since=1",
                headers: [("Accept", "text/event-stream"), ("X-Session-Id", session)])
            #expect(try stream.nextEvent()?.event == "open")

            #expect(try Self.put(admin, #"{"changes": [{"id": "fish", "state": "sold_out"}]}"#).status == 200)
            var hiddenVersion: String?
            for (index, server) in servers.enumerated() {
                #expect(
                    try eventually { try Self.listing(server, session).ids == all.filter { $0 != "fish" } },
                    "instance \(index) leaves the dish out and keeps drinks open")
                let version = try Self.listing(server, session).version
                #expect(version != published.version)
                if let hiddenVersion { #expect(version == hiddenVersion, "one listing version everywhere") }
                hiddenVersion = version
                let count = try server.connect().request("GET", "/count", headers: [("X-Session-Id", session)]).json()
                #expect(count["count"] == .number(5) && count["leafCount"] == .number(2), "\(count)")
            }
            let listing = try admin.request(
                "GET", "/admin/availability", headers: [("Authorization", "Bearer \(LiveAdminTests.token)")]
            ).json()
            #expect(listing["hidden"] == .array([.string("fish")]), "\(listing)")
            let metrics = LiveMetrics(try servers[1].connect().request("GET", "/metrics").text)
            #expect(metrics["menu_availability_hidden_nodes"] == 1)
            let told = try #require(try stream.nextEvent())
            #expect(told.event == "change", "\(told)")
            let splices = try told.json()["reload"]?["changes"]?.arrayValue ?? []
            #expect(splices.count == 1 && splices.first?["at"] == .number(1) && splices.first?["removed"] == .number(1))

            // The hidden group, named: a 404 that says why, from any instance.
            _ = try Self.put(admin, #"{"changes": [{"id": "specials", "state": "paused"}]}"#)
            #expect(try eventually { try !Self.listing(servers[1], session).ids.contains("specials") })
            let both = LiveMetrics(try servers[1].connect().request("GET", "/metrics").text)
            #expect(both["menu_availability_hidden_nodes"] == 4, "fish, and specials with its eel and crab")
            let toggle = try servers[1].connect().request(
                "POST", "/groups/specials/toggle", headers: [("X-Session-Id", session)])
            #expect(toggle.status == 404)
            let error = try toggle.json()["error"]
            #expect(error?["code"] == .string("unknown_group"))
            #expect(error?["message"]?.stringValue?.contains("whenUnavailable is hide") == true, "\(toggle)")

            // Available again: back on every instance, on the published listing's version.
            _ = try Self.put(
                admin,
                #"{"changes": [{"id": "fish", "state": "available"}, {"id": "specials", "state": "available"}]}"#)
            for (index, server) in servers.enumerated() {
                #expect(try eventually { try Self.listing(server, session).ids == all }, "instance \(index)")
                #expect(try Self.listing(server, session).version == published.version)
            }
            let none = LiveMetrics(try servers[0].connect().request("GET", "/metrics").text)
            #expect(none["menu_availability_hidden_nodes"] == 0)
        }
    }
}
