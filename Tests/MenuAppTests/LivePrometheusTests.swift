import ChildProcess
import Foundation
import HTTPTestSupport
import MenuApp
import MenuTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A real Prometheus scrapes a real server every second; its query API shows a counter at least
/// at the value this test's own requests gave it.
@Suite("Live: a real Prometheus scrapes the metrics")
struct LivePrometheusTests {
    @Test(.timeLimit(.minutes(1)))
    func prometheusSeesTheCounterTheTestsRequestsMoved() throws {
        let prometheus = try #require(LiveMetrics.tool("prometheus"), "prometheus is missing: scripts/install-deps prometheus")
        let server = try LiveServer()
        defer { server.shutdown() }
        let connection = try server.connect()
        let requests = 7
        for _ in 0 ..< requests { #expect(try connection.request("GET", "/count").status == 200) }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prometheus-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("""
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            scrape_configs:
              - job_name: menu-server
                static_configs:
                  - targets: ["127.0.0.1:\(server.port)"]
            """.utf8).write(to: URL(fileURLWithPath: directory + "/prometheus.yml"))
        let port = try Self.freePort()
        let child = try ChildProcess(
            executable: prometheus,
            arguments: ["--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
                        "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn"],
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
        #expect(seen == Double(requests), "Prometheus's query API gave \(String(describing: seen)); its log: \(log.suffix(800))")
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

    /// A TCP port free on 127.0.0.1 a moment ago (bound to 0, read back, closed).
    private static func freePort() throws -> Int {
        let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw LiveError("socket: \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw LiveError("bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
