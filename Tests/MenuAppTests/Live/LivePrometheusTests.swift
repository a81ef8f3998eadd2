import ChildProcess
import Foundation
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension AppTests {
    /// A real Prometheus scrapes a real server every second; its query API shows a counter at least
    /// at the value this test's own requests gave it.
    @Suite("Live: a real Prometheus scrapes the metrics")
    struct LivePrometheusTests {
        @Test
        func prometheusSeesTheCounterTheTestsRequestsMoved() throws {
            let prometheus = try #require(
                LiveMetrics.tool("prometheus"), "prometheus is missing: scripts/install-deps prometheus")
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let requests = 7
            for _ in 0 ..< requests { #expect(try connection.request("GET", "/count").status == 200) }

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "prometheus-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try Data(
                """
                global:
                  scrape_interval: 1s
                  evaluation_interval: 1s
                scrape_configs:
                  - job_name: menu-server
                    static_configs:
                      - targets: ["127.0.0.1:\(server.port)"]
                """.utf8
            ).write(to: URL(fileURLWithPath: directory + "/prometheus.yml"))
            let port = try freeLoopbackPort()
            let child = try ChildProcess(
                executable: prometheus,
                arguments: [
                    "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
                    "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn"
                ],
                standardOutput: .discard, standardError: .file(directory + "/prometheus.log"))
            defer {
                child.send(SIGTERM)
                _ = child.waitOrKill(timeout: .seconds(5))
            }

            // A bounded wait for the first scrape that has the value; each query is one request.
            let query = "menu_http_requests_total{route=\"/count\",class=\"2xx\"}"
            let target = "/api/v1/query?query=" + query.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            var seen: Double?
            _ = eventually(every: .milliseconds(250)) {
                guard child.isRunning else { return true }  // it stopped: its log says why
                seen = try? Self.queryValue(port: port, target: target)
                return (seen ?? 0) >= Double(requests)
            }
            let log = (try? String(contentsOfFile: directory + "/prometheus.log", encoding: .utf8)) ?? ""
            #expect(
                seen == Double(requests),
                "Prometheus's query API gave \(String(describing: seen)); its log: \(log.suffix(800))")
        }

        /// The first value of an instant query's answer, nil when it has none yet.
        private static func queryValue(port: Int, target: String) throws -> Double? {
            let response = try LiveRawConnection(port: port, receiveTimeoutSeconds: 5).request("GET", target)
            guard response.status == 200,
                let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
                let data = object["data"] as? [String: Any], let result = data["result"] as? [[String: Any]],
                let value = result.first?["value"] as? [Any], value.count == 2, let text = value[1] as? String
            else { return nil }
            return Double(text)
        }
    }
}
