import Foundation
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import MenuAvailability
import MenuService
import MenuTestSupport
import Metrics
import RedisClient
import RedisTestSupport
import Testing

extension AppTests {
    /// Availability through the admin API of a real server (issue 27 §2): a batch with a good
    /// token shows on every session's rows at once, on the public port, and in the listing and
    /// the metrics; a bad batch or token changes nothing; `until` ends an entry by itself; a
    /// reload keeps entries by id; `--data-dir` keeps them across a restart.
    @Suite("Live: availability through the admin API")
    struct LiveAvailabilityTests {
        static let token = LiveAdminTests.token

        private static func put(_ admin: LiveRawConnection, _ body: String, token: String? = Self.token) throws
            -> LiveResponse
        {
            try admin.request(
                "PUT", "/admin/availability",
                headers: (token.map { [("Authorization", "Bearer \($0)")] } ?? []) + [
                    ("Content-Type", "application/json")
                ], body: Array(body.utf8))
        }

        private static func listing(_ admin: LiveRawConnection) throws -> LiveJSON {
            try admin.request("GET", "/admin/availability", headers: [("Authorization", "Bearer \(Self.token)")]).json()
        }

        /// The availability each row of the default view shows, by id.
        private static func shown(_ server: LiveServer) throws -> [String: LiveJSON] {
            let rows = try server.connect().request("GET", "/rows?limit=500").json()["rows"]?.arrayValue ?? []
            var shown: [String: LiveJSON] = [:]
            for row in rows {
                if let id = row["id"]?.stringValue, let availability = row["availability"] { shown[id] = availability }
            }
            return shown
        }

        private static func directory() -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("availability-\(UUID().uuidString)")
        }

        /// A menu (generation 1 of ``ReloadMenus``) and a token file in a new `directory`.
        private static func files(in directory: URL) throws -> (config: URL, tokens: URL) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let config = directory.appendingPathComponent("menu.json")
            try ReloadMenus.write(generation: 1, to: config.path)
            let tokens = directory.appendingPathComponent("tokens")
            try Data("\(token)\n".utf8).write(to: tokens)
            return (config, tokens)
        }

        /// A server on `config` with an admin listener taking `tokens`, its sessions and
        /// availability on `redis`.
        static func start(config: URL, tokens: URL, on redis: RedisServerProcess) throws -> LiveServer {
            try LiveServer {
                $0.configPath = config.path
                $0.store = .redis(redis.endpoint)
                $0.redisTimeoutMilliseconds = 2_000
                $0.adminListen = ListenAddress("127.0.0.1:0")
                $0.adminTokenFile = tokens.path
            }
        }

        /// Runs `body` with a server with an admin listener (``LiveAdminTests/start(_:)``), a
        /// connection to that listener and the config file, and stops it after.
        private static func withServer(_ body: (LiveServer, LiveRawConnection, URL) throws -> Void) throws {
            let directory = Self.directory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let (server, adminPort, config, _) = try LiveAdminTests.start(directory)
            defer { server.shutdown() }
            try body(server, try LiveRawConnection(port: adminPort), config)
        }

        @Test func aBatchWithAGoodTokenShowsOnThePublicRowsAndInTheListingAndMetrics() throws {
            try Self.withServer { server, admin, _ in
                let before = try server.connect().request("GET", "/rows?limit=500")
                let tag = try #require(before.header("ETag"))

                let applied = try Self.put(
                    admin,
                    #"{"changes": [{"id": "mapo-tofu", "state": "sold_out", "until": "2999-01-01T19:30:00+01:00", "reason": "back at 19:30"}, {"id": "sides", "state": "paused"}]}"#
                )
                #expect(applied.status == 200, "\(applied.text)")
                #expect(
                    try applied.json()
                        == .object(["revision": .number(1), "changed": .array([.string("mapo-tofu"), .string("sides")])]
                        ))

                let shown = try Self.shown(server)
                #expect(
                    shown["mapo-tofu"]
                        == .object([
                            "state": .string("sold_out"), "until": .string("2999-01-01T18:30:00Z"),
                            "reason": .string("back at 19:30")
                        ]))
                #expect(shown["sides"] == .object(["state": .string("paused")]))
                #expect(shown.count == 2, "\(shown.keys.sorted())")
                let after = try server.connect().request("GET", "/rows?limit=500", headers: [("If-None-Match", tag)])
                #expect(after.status == 200, "a page cached before the batch is not confirmed")

                let listing = try Self.listing(admin)
                #expect(listing["revision"] == .number(1))
                #expect(
                    listing["unavailable"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["mapo-tofu", "sides"])
                let metrics = LiveMetrics(try server.connect().request("GET", "/metrics").text)
                #expect(metrics["menu_availability_entries"] == 2)
                #expect(metrics["menu_availability_revision"] == 1)
                #expect(metrics["menu_availability_changes_total"] == 2)

                // Clearing is a batch too.
                #expect(try Self.put(admin, #"{"changes": [{"id": "sides", "state": "available"}]}"#).status == 200)
                #expect(try Self.shown(server).keys.sorted() == ["mapo-tofu"])
            }
        }

        @Test func aBadBatchOrTokenChangesNothingAndTheAnswerSaysWhy() throws {
            try Self.withServer { server, admin, _ in
                let good = #"{"changes": [{"id": "mapo-tofu", "state": "sold_out"}]}"#
                try liveExpectError(try Self.put(admin, good, token: nil), status: 401, code: "unauthorized")
                try liveExpectError(
                    try Self.put(admin, good, token: "wrong-token-0123456789abcdef"), status: 401, code: "invalid_token"
                )
                let unknown = try Self.put(
                    admin,
                    #"{"changes": [{"id": "mapo-tofu", "state": "sold_out"}, {"id": "no-such-dish", "state": "paused"}]}"#
                )
                try liveExpectError(unknown, status: 400, code: "unknown_node")
                #expect(try unknown.json()["error"]?["message"]?.stringValue?.contains("\"no-such-dish\"") == true)
                let typo = try Self.put(
                    admin, #"{"changes": [{"id": "mapo-tofu", "state": "sold_out", "untill": "x"}]}"#)
                try liveExpectError(typo, status: 400, code: "invalid_body")
                #expect(try typo.json()["error"]?["message"]?.stringValue?.contains("changes[0]") == true)
                let past = try Self.put(
                    admin, #"{"changes": [{"id": "mapo-tofu", "state": "sold_out", "until": "2001-01-01T00:00:00Z"}]}"#)
                try liveExpectError(past, status: 400, code: "invalid_batch")
                try liveExpectError(
                    try admin.request(
                        "DELETE", "/admin/availability", headers: [("Authorization", "Bearer \(Self.token)")]),
                    status: 405, code: "method_not_allowed")
                // The public port has no admin route.
                try liveExpectError(
                    try server.connect().request(
                        "PUT", "/admin/availability", headers: [("Authorization", "Bearer \(Self.token)")],
                        body: Array(good.utf8)), status: 404, code: "not_found")
                #expect(try Self.shown(server).isEmpty)
                #expect(try Self.listing(admin)["revision"] == .number(0))
            }
        }

        @Test func anEntryEndsByItselfAtItsUntil() throws {
            try Self.withServer { server, admin, _ in
                let until = Timestamp.now.adding(milliseconds: 1_500)
                let body =
                    #"{"changes": [{"id": "drinks", "state": "sold_out", "until": "\#(until.rfc3339)"}, {"id": "grass-jelly", "state": "paused"}]}"#
                #expect(try Self.put(admin, body).status == 200)
                // Shown until then (unless this machine took that long to ask).
                let shownBefore = try Self.shown(server)["drinks"] != nil
                #expect(shownBefore || Timestamp.now >= until, "shown until its time")
                #expect(try eventually { try Self.shown(server)["drinks"] == nil }, "the entry ended by itself")
                #expect(Timestamp.now >= until, "not before its time")
                #expect(try Self.shown(server).keys.sorted() == ["grass-jelly"])
                #expect(try Self.listing(admin)["revision"] == .number(2))
            }
        }

        @Test func aReloadKeepsEntriesByIdAndSaysWhichItDropped() throws {
            try Self.withServer { server, admin, config in
                // `hotpot` is only in odd generations; `drinks` (a group at the top) in generation 2 too.
                #expect(
                    try Self.put(
                        admin,
                        #"{"changes": [{"id": "hotpot", "state": "sold_out"}, {"id": "drinks", "state": "paused"}]}"#
                    ).status == 200)
                try ReloadMenus.write(generation: 2, to: config.path)
                let reloaded = try admin.request(
                    "POST", "/admin/reload", headers: [("Authorization", "Bearer \(Self.token)")])
                #expect(reloaded.status == 200)
                #expect(
                    try reloaded.json()["summary"]?.stringValue?.contains("availability dropped for 1 node") == true)
                #expect(
                    try Self.listing(admin)["unavailable"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [
                        "drinks"
                    ])
                #expect(try Self.shown(server).keys.sorted() == ["drinks"])
            }
        }

        @Test func anOpenStreamGetsAnAvailabilityEventNamingTheRowsThatChanged() throws {
            try Self.withServer { server, admin, _ in
                let created = try server.connect().request("POST", "/sessions")
                let session = try #require(try created.json()["sessionId"]?.stringValue)
                let rows =
                    try server.connect().request(
                        "GET", "/rows?limit=500", headers: [("X-Session-Id", session)]
                    ).json()["rows"]?.arrayValue ?? []
                let index = try #require(rows.firstIndex { $0["id"]?.stringValue == "mapo-tofu" })
                let stream = try LiveEventStream(
                    port: server.port, "/changes?since=0",
                    headers: [("Accept", "text/event-stream"), ("X-Session-Id", session)])
                #expect(try stream.nextEvent()?.event == "open")
                #expect(
                    try Self.put(admin, #"{"changes": [{"id": "mapo-tofu", "state": "sold_out"}]}"#).status == 200)
                let event = try #require(try stream.nextEvent())
                #expect(event.event == "availability" && event.id == nil, "\(event)")
                #expect(
                    try event.json()
                        == .object([
                            "since": .number(0), "revision": .number(1),
                            "reconfigured": .array([.number(Double(index))])
                        ]))
                // A write then comes as before, its revision the session's next.
                #expect(
                    try server.connect().request("POST", "/groups/drinks/toggle", headers: [("X-Session-Id", session)])
                        .status == 200)
                let change = try #require(try stream.nextEvent())
                #expect(change.event == "change" && change.id == "1", "\(change)")
            }
        }

        /// Three instances on one Redis: a batch sent to one shows on the rows of all three, an
        /// open stream on another hears it, batches sent to two at once both land (one applied
        /// again on the other's overlay), and an instance started later serves the overlay too.
        @Test func threeInstancesOnOneRedisServeOneAdminWrite() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let directory = Self.directory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let (config, tokens) = try Self.files(in: directory)
            func start() throws -> LiveServer { try Self.start(config: config, tokens: tokens, on: redis) }
            let servers = try (0 ..< 3).map { _ in try start() }
            defer { for server in servers { server.shutdown() } }
            let admins = try servers.map { try LiveRawConnection(port: try #require($0.server.adminPort)) }
            let created = try servers[2].connect().request("POST", "/sessions")
            let session = try #require(try created.json()["sessionId"]?.stringValue)
            let stream = try LiveEventStream(
                port: servers[2].port, "/changes?since=0",
                headers: [("Accept", "text/event-stream"), ("X-Session-Id", session)])
            #expect(try stream.nextEvent()?.event == "open")

            #expect(try Self.put(admins[0], #"{"changes": [{"id": "mapo-tofu", "state": "sold_out"}]}"#).status == 200)
            for (index, server) in servers.enumerated() {
                #expect(
                    try eventually { try Self.shown(server)["mapo-tofu"] != nil }, "instance \(index) shows the dish")
            }
            let heard = try #require(try stream.nextEvent())
            #expect(heard.event == "availability", "\(heard)")
            #expect(try heard.json()["revision"] == .number(1))

            // Two batches at once, through two instances: both land, in some order.
            let first = LiveLocked<Int?>(nil)
            let second = LiveLocked<Int?>(nil)
            let ports = try servers.prefix(2).map { try #require($0.server.adminPort) }
            let threads = [
                Thread {
                    let admin = try? LiveRawConnection(port: ports[0])
                    let status = admin.flatMap {
                        try? Self.put($0, #"{"changes": [{"id": "drinks", "state": "paused"}]}"#).status
                    }
                    first.update { $0 = status ?? -1 }
                },
                Thread {
                    let admin = try? LiveRawConnection(port: ports[1])
                    let status = admin.flatMap {
                        try? Self.put($0, #"{"changes": [{"id": "desserts", "state": "paused"}]}"#).status
                    }
                    second.update { $0 = status ?? -1 }
                }
            ]
            for thread in threads { thread.start() }
            #expect(eventually { first.value != nil && second.value != nil })
            #expect(first.value == 200 && second.value == 200)
            for (index, server) in servers.enumerated() {
                #expect(
                    try eventually {
                        let shown = try Self.shown(server)
                        return shown["drinks"] != nil && shown["desserts"] != nil && shown["mapo-tofu"] != nil
                    }, "instance \(index) shows all three")
                #expect(try Self.listing(admins[index])["revision"] == .number(3))
            }
            // One started later reads the overlay from Redis.
            let late = try start()
            defer { late.shutdown() }
            #expect(try Self.shown(late).keys.contains("mapo-tofu"))
        }

        /// The Redis keeper's compare-and-set: a second writer that kept nothing of the first's is
        /// refused with the first's overlay, and keeps over it once it has it.
        @Test func aSecondWriterOnRedisIsToldTheOverlayKeptFirst() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let options = RedisOptions(timeout: .seconds(2))
            let one = RedisAvailability(endpoint: redis.endpoint, options: options, prefix: "t:", log: { _ in })
            let two = RedisAvailability(endpoint: redis.endpoint, options: options, prefix: "t:", log: { _ in })
            defer {
                one.stop()
                two.stop()
            }
            #expect(one.keptOverlay == nil)
            let first = AvailabilityOverlay(revision: 1, entries: ["a": Availability(state: .soldOut, reason: "r")])
            try one.keep(first, over: 0)
            let mine = AvailabilityOverlay(revision: 1, entries: ["b": Availability(state: .paused)])
            do {
                try two.keep(mine, over: 0)
                Issue.record("the second writer's overlay was kept over the first's")
            } catch {
                #expect(error.current == first)
            }
            let merged = AvailabilityOverlay(revision: 2, entries: first.entries.merging(mine.entries) { $1 })
            try two.keep(merged, over: 1)
            let adopted = LiveLocked<AvailabilityOverlay?>(nil)
            one.follow { overlay in adopted.update { $0 = overlay } }
            #expect(eventually { adopted.value == merged }, "the first writer reads the second's")
            #expect(
                RedisAvailability(endpoint: redis.endpoint, options: options, prefix: "t:", log: { _ in }).keptOverlay
                    == merged)
            #expect(
                RedisAvailability(endpoint: redis.endpoint, options: options, prefix: "u:", log: { _ in }).keptOverlay
                    == nil, "another prefix shares nothing")
        }

        @Test func theDataDirectoryKeepsTheOverlayAcrossARestart() throws {
            let directory = Self.directory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let (config, tokens) = try Self.files(in: directory)
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
            func start() throws -> LiveServer {
                try LiveServer {
                    $0.configPath = config.path
                    $0.adminListen = ListenAddress("127.0.0.1:0")
                    $0.adminTokenFile = tokens.path
                    $0.dataDirectory = directory.appendingPathComponent("data").path
                }
            }
            let first = try start()
            let admin = try LiveRawConnection(port: try #require(first.server.adminPort))
            #expect(
                try Self.put(admin, #"{"changes": [{"id": "mapo-tofu", "state": "sold_out", "reason": "none left"}]}"#)
                    .status
                    == 200)
            first.shutdown()

            let second = try start()
            defer { second.shutdown() }
            #expect(
                try Self.shown(second)["mapo-tofu"]
                    == .object(["state": .string("sold_out"), "reason": .string("none left")]))
            let again = try LiveRawConnection(port: try #require(second.server.adminPort))
            #expect(try Self.listing(again)["revision"] == .number(1))

            // A file that is not what the server writes stops the start, naming it.
            second.shutdown()
            try Data(#"{"revision": 1, "entries": {"rice": {"state": "gone"}}}"#.utf8).write(
                to: directory.appendingPathComponent("data/availability.json"))
            #expect {
                _ = try start()
            } throws: { error in
                "\(error)".contains("availability.json") && "\(error)".contains("entries.rice")
            }
        }
    }
}
