import ChildProcess
import Foundation
import HTTPServer
import MenuApp
import MenuAppTestSupport
import MenuModel
import MenuService
import MenuTestSupport
import Testing

extension AppTests {
    /// `GET /metrics` of a real server: the tests' own requests move the counters under their route
    /// templates (never a raw path or an id), the output passes `promtool check metrics`, the
    /// metrics can have a listener of their own, and a real Prometheus scrapes them.
    @Suite("Live: metrics")
    struct LiveMetricsTests {
        @Test func theTestsOwnRequestsAreCountedUnderTheirRouteTemplatesAndStatuses() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let created = try connection.request("POST", "/sessions")
            let session = try created.decode(LiveSessionBody.self).sessionId
            var tag = ""
            for _ in 0 ..< 3 {
                let page = try connection.request("GET", "/rows?limit=5", headers: [("X-Session-Id", session)])
                #expect(page.status == 200)
                tag = page.header("ETag") ?? ""
            }
            let unchanged = try connection.request(
                "GET", "/rows?limit=5", headers: [("X-Session-Id", session), ("If-None-Match", tag)])
            #expect(unchanged.status == 304)
            #expect(try connection.request("POST", "/rows").status == 405)
            #expect(try connection.request("GET", "/no/such/secret-path").status == 404)
            #expect(try connection.request("DELETE", "/session", headers: [("X-Session-Id", session)]).status == 204)

            let scrape = try connection.request("GET", "/metrics")
            #expect(scrape.status == 200)
            #expect(scrape.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            #expect(scrape.header("Cache-Control") == "no-store")
            let metrics = LiveMetrics(scrape.text)
            #expect(metrics["menu_http_requests_total{route=\"/rows\",class=\"2xx\"}"] == 3)
            #expect(metrics["menu_http_requests_total{route=\"/rows\",class=\"3xx\"}"] == 1)
            #expect(metrics["menu_http_requests_total{route=\"/rows\",class=\"4xx\"}"] == 1)
            #expect(metrics["menu_http_requests_total{route=\"/sessions\",class=\"2xx\"}"] == 1)
            #expect(metrics["menu_http_requests_total{route=\"/session\",class=\"2xx\"}"] == 1)
            #expect(metrics["menu_http_requests_total{route=\"unmatched\",class=\"4xx\"}"] == 1)
            #expect(metrics["menu_http_responses_total{status=\"304\"}"] == 1)
            #expect(metrics["menu_http_request_duration_seconds_count{route=\"/rows\"}"] == 5)
            #expect(metrics["menu_http_request_duration_seconds_bucket{route=\"/rows\",le=\"+Inf\"}"] == 5)
            #expect(metrics["menu_sessions_created_total"] == 1)
            #expect(metrics["menu_sessions_live"] == 0)
            #expect(metrics["menu_info{version=\"\(server.server.service.menu.version)\"}"] == 1)
            #expect(metrics["menu_nodes"] == Double(server.server.service.menu.nodeCount))
            #expect((metrics["menu_http_connections_open{listener=\"main\"}"] ?? 0) >= 1)
            #expect((metrics["process_resident_memory_bytes"] ?? 0) > 1_000_000)
            #expect(
                !scrape.text.contains("secret-path") && !scrape.text.contains(session),
                "no raw path and no session id in a label")
        }

        @Test func theOutputPassesPromtoolCheckMetrics() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            _ = try connection.request("GET", "/rows")
            _ = try connection.request("GET", "/nodes/no-such-node")
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString).txt")
                .path
            defer { try? FileManager.default.removeItem(atPath: file) }
            try Data(try connection.request("GET", "/metrics").body).write(to: URL(fileURLWithPath: file))
            let promtool = try #require(
                LiveMetrics.tool("promtool"), "promtool is missing: scripts/install-deps prometheus")
            // promtool reads the exposition from standard input; a lint warning is a non-zero exit too.
            let check = try liveRun(
                URL(fileURLWithPath: "/bin/sh"), ["-c", "\"$0\" check metrics < \"$1\"", promtool, file])
            #expect(check.status == 0, "promtool check metrics: \(check.stdout) \(check.stderr)")
        }

        @Test func withMetricsListenTheMetricsMoveToTheirOwnListener() throws {
            let server = try LiveServer { $0.metricsListen = ListenAddress("127.0.0.1:0") }
            defer { server.shutdown() }
            let metricsPort = try #require(server.server.metricsHTTP?.port)
            #expect(metricsPort != server.port)
            let main = try server.connect()
            _ = try main.request("GET", "/count")
            try liveExpectError(main.request("GET", "/metrics"), status: 404, code: "not_found")
            let side = try LiveRawConnection(port: metricsPort)
            #expect(try side.request("GET", "/rows").status == 404)
            let scrape = try side.request("GET", "/metrics")
            #expect(scrape.status == 200)
            #expect(scrape.header("Cache-Control") == "no-store")
            let metrics = LiveMetrics(scrape.text)
            #expect(metrics["menu_http_requests_total{route=\"/count\",class=\"2xx\"}"] == 1)
            #expect(metrics["menu_http_requests_total{route=\"/metrics\",class=\"4xx\"}"] == 1)
            #expect(metrics["menu_http_connections_open{listener=\"metrics\"}"] == 1)
        }

        @Test func withADataDirectoryEachWriteIsADurabilityWaitAndReadsAreNot() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "metrics-data-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let server = try LiveServer { $0.dataDirectory = directory }
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try connection.request("POST", "/sessions").decode(LiveSessionBody.self).sessionId
            #expect(
                try connection.request("POST", "/groups/drinks/toggle", headers: [("X-Session-Id", session)]).status
                    == 200)
            #expect(try connection.request("GET", "/rows", headers: [("X-Session-Id", session)]).status == 200)
            let metrics = LiveMetrics(try connection.request("GET", "/metrics").text)
            #expect(metrics["menu_store_durable_waits_total"] == 2, "the creation and the toggle")
            #expect((metrics["menu_store_durable_wait_seconds_total"] ?? 0) > 0)
            #expect(metrics["menu_store_errors_total"] == 0)
            #expect(metrics["menu_sessions_created_total"] == 1 && metrics["menu_sessions_live"] == 1)
        }

        @Test func reloadsAreCountedByOutcomeAndTheInfoMetricNamesTheNewVersion() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "metrics-reload-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let config = directory + "/menu.json"
            try ReloadMenus.write(generation: 1, to: config)
            let server = try LiveServer { $0.configPath = config }
            defer { server.shutdown() }
            try Data("{not json".utf8).write(to: URL(fileURLWithPath: config))
            server.server.reloadLogged(reason: "test")
            try ReloadMenus.write(generation: 2, to: config)
            server.server.reloadLogged(reason: "test")
            let metrics = LiveMetrics(try server.connect().request("GET", "/metrics").text)
            #expect(metrics["menu_reloads_total{outcome=\"failed\"}"] == 1)
            #expect(metrics["menu_reloads_total{outcome=\"succeeded\"}"] == 1)
            #expect(metrics["menu_info{version=\"\(ReloadMenus.menu(generation: 2).version)\"}"] == 1)
            #expect(metrics["menu_nodes"] == Double(ReloadMenus.menu(generation: 2).nodeCount))
        }
    }
}

/// The samples of one scrape, by their series (`name{labels}` exactly as written).
struct LiveMetrics {
    let samples: [String: Double]

    init(_ text: String) {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        self.samples = samples
    }

    subscript(series: String) -> Double? { samples[series] }

    /// The path of `name` in the usual binary directories; nil when it is not installed.
    static func tool(_ name: String) -> String? {
        ["/usr/bin/", "/usr/local/bin/", "/bin/"].map { $0 + name }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }
}
