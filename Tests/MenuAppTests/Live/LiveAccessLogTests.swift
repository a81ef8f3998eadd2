import Foundation
import HTTPCore
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import Testing

extension AppTests {
    /// The access log of a real server: a line per request with its route template (never the
    /// session id), status, time, bytes and request id, in text or JSON, written off the request
    /// threads; `--quiet` and `--log-level` leave lines out.
    @Suite("Live: access log")
    struct LiveAccessLogTests {
        /// Runs `requests` against a server logging to a file with `format`, `level` and `quiet`;
        /// returns the file's lines once the log has stopped.
        private func logLines(
            _ format: LogFormat, level: LogLevel = .info, quiet: Bool = false,
            _ requests: (LiveRawConnection) throws -> Void
        ) throws -> [String] {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID().uuidString).log")
                .path
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            try #require(descriptor >= 0)
            defer {
                close(descriptor)
                unlink(path)
            }
            let log = ServerLog(format: format, level: level, quiet: quiet, descriptor: descriptor)
            var settings = ServerSettings()
            settings.port = 0
            settings.configPath = LivePaths.menuConfig
            let server = try LiveServer(settings: settings, serverLog: log).server
            try requests(try LiveRawConnection(port: server.port))
            server.shutdown()
            log.event(.info, "stopped")
            log.stop()
            return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        }

        @Test func eachRequestIsOneJSONLineWithItsTemplateStatusTimeBytesAndID() throws {
            var session = ""
            var bodies: [Int] = []
            let lines = try logLines(.json) { connection in
                let created = try connection.request(
                    "POST", "/sessions", headers: [("X-Request-Id", "client-chosen-1")])
                session = try created.decode(LiveSessionBody.self).sessionId
                bodies.append(created.body.count)
                let page = try connection.request("GET", "/rows?limit=3", headers: [("X-Session-Id", session)])
                bodies.append(page.body.count)
                #expect(
                    try connection.request("DELETE", "/session", headers: [("X-Session-Id", session)]).status == 204)
            }
            let objects = try lines.map {
                try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0)")
            }
            let requests = objects.filter { $0["route"] != nil }
            #expect(requests.map { $0["route"] as? String } == ["/sessions", "/rows", "/session"])
            #expect(requests.map { $0["method"] as? String } == ["POST", "GET", "DELETE"])
            #expect(requests.map { $0["status"] as? Int } == [201, 200, 204])
            #expect(requests.prefix(2).map { $0["bytes"] as? Int } == bodies)
            #expect(requests[0]["request_id"] as? String == "client-chosen-1")
            for request in requests {
                #expect(RequestID.isSane(request["request_id"] as? String ?? ""))
                #expect((request["duration_us"] as? Double ?? -1) >= 0)
                #expect((request["time"] as? String)?.hasSuffix("Z") == true)
            }
            #expect(objects.contains { $0["message"] as? String == "stopped" && $0["level"] as? String == "info" })
            #expect(!lines.contains { $0.contains(session) }, "a session id never reaches the log")
        }

        @Test func textLinesNameTheTemplateAndAnUnknownPathIsUnmatched() throws {
            let lines = try logLines(.text) { connection in
                _ = try connection.request("POST", "/groups/drinks/toggle")
                _ = try connection.request("GET", "/some/raw/path")
            }
            #expect(lines.count == 3)
            #expect(
                lines[0].hasPrefix("menu-server: time=")
                    && lines[0].contains(" method=POST route=/groups/{id}/toggle status=200 "))
            #expect(lines[1].contains(" route=unmatched status=404 ") && !lines[1].contains("raw"))
            #expect(lines[2] == "menu-server: stopped")
        }

        @Test func quietDropsRequestLinesAndAWarnLevelDropsInfoEventsToo() throws {
            let quiet = try logLines(.text, quiet: true) { _ = try $0.request("GET", "/count") }
            #expect(quiet == ["menu-server: stopped"])
            let warn = try logLines(.json, level: .warn) { _ = try $0.request("GET", "/count") }
            #expect(warn.isEmpty)
        }

        @Test
        func theProcessLogsStartUpRequestsAndShutdownInJSON() throws {
            let child = try LiveChildServer(arguments: [
                "--port", "0", "--config", LivePaths.menuConfig, "--log-format", "json"
            ])
            defer { child.stop() }
            let connection = try LiveRawConnection(port: child.port)
            #expect(
                try connection.request("GET", "/healthz", headers: [("X-Request-Id", "probe-7")]).header("X-Request-Id")
                    == "probe-7")
            #expect(child.signalAndWait())
            let log = child.stderrText.value
            let lines = log.split(separator: "\n")
            #expect(
                !lines.isEmpty && lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil },
                "\(log)")
            #expect(log.contains(#""message":"sessions are kept in memory only; they are lost on restart""#))
            #expect(log.contains(#""route":"/healthz","status":200"#) && log.contains(#""request_id":"probe-7""#))
            #expect(log.contains(#""message":"signal 15, finishing requests in flight""#))
        }
    }
}
