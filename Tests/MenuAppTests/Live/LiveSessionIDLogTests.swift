// A session id is a bearer credential (issue 24 §3): it never reaches an access log. Every
// operation openapi.yaml documents is sent with a live session through nginx running the shipped
// Config/nginx.conf in front of a real menu-server, and so is the old path form /sessions/{id} a
// stale client still sends; then the server's own log and every log nginx wrote are searched for
// each id the server issued.

import Foundation
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import NginxTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension AppTests {
    @Suite(
        "Live: no session id in any access log",
        .enabled(if: FileManager.default.isExecutableFile(atPath: NginxProcess.executable)))
    struct LiveSessionIDLogTests {
        /// The request that exercises each path template of openapi.yaml with a live session: the
        /// target (ids of the test menu filled in, the query the operation needs) and the body. An
        /// operation documented without an entry here fails the test until it has one.
        static let requests: [String: (target: String, body: String)] = [
            "/rows": ("/rows?limit=5", ""), "/count": ("/count", ""), "/menu": ("/menu", ""),
            "/search": ("/search?q=beer", ""),
            "/changes": ("/changes?since=0", ""), "/healthz": ("/healthz", ""), "/readyz": ("/readyz", ""),
            "/sessions": ("/sessions", ""), "/session": ("/session", ""),
            "/groups/{id}/toggle": ("/groups/drinks/toggle", ""),
            "/groups/{id}/expansion": ("/groups/beer/expansion", #"{"isExpanded":false}"#),
            "/expansion": ("/expansion", #"{"all":"expanded"}"#),
            "/nodes/{id}": ("/nodes/snow-beer", ""), "/nodes/{id}/reveal": ("/nodes/snow-beer/reveal", ""),
            "/nodes/{id}/selection": ("/nodes/beer/selection", #"{"selected":true}"#),
            "/selection": ("/selection", #"{"all":false}"#),
            "/metrics": ("/metrics", ""), "/": ("/", ""), "/app.js": ("/app.js", ""), "/app.css": ("/app.css", "")
        ]

        /// Every operation of openapi.yaml as `(method, template)`, `DELETE /session` last (it ends
        /// the session the others use).
        static func documentedOperations() throws -> [(method: String, template: String)] {
            try OpenAPIDocument().queryParameters().keys.sorted().map { operation in
                let parts = operation.split(separator: " ", maxSplits: 1)
                return (String(parts[0]), String(parts[1]))
            }.sorted { ($0.method == "DELETE" ? 1 : 0) < ($1.method == "DELETE" ? 1 : 0) }
        }

        @Test(arguments: LogFormat.allCases)
        func noLogShowsASessionIDOnAnyRouteNorOnTheOldPathForm(format: LogFormat) throws {
            let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("ids-\(UUID().uuidString).log")
                .path
            let descriptor = open(logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            try #require(descriptor >= 0)
            defer {
                close(descriptor)
                unlink(logPath)
            }
            let serverLog = ServerLog(format: format, level: .debug, quiet: false, descriptor: descriptor)
            var settings = ServerSettings()
            settings.port = 0
            settings.host = "127.0.0.1"
            settings.configPath = LivePaths.menuConfig
            let server = try LiveServer(settings: settings, serverLog: serverLog).server
            var serverStopped = false
            defer { if !serverStopped { server.shutdown() } }
            let nginx = try NginxProcess(deploymentConfig: ScaleOutNginxTests.examplePath, upstreams: [server.port])
            defer { nginx.stop() }

            let connection = try LiveRawConnection(port: nginx.port)
            let created = try connection.request("POST", "/sessions")
            let session = try #require(created.header("X-Session-Id"), "\(created)")
            var issued: Set<String> = [session]
            var sent: [String] = ["POST /sessions"]
            func send(_ method: String, _ target: String, body: String = "") throws -> LiveResponse {
                let response = try connection.request(
                    method, target, headers: [("X-Session-Id", session)], body: Array(body.utf8))
                if let id = response.header("X-Session-Id") { issued.insert(id) }
                sent.append("\(method) \(target)")
                return response
            }
            let operations = try Self.documentedOperations()
            #expect(operations.count >= 30, "\(operations)")
            for (method, template) in operations {
                guard let request = Self.requests[template] else {
                    Issue.record("openapi.yaml documents \(method) \(template): add the request that exercises it")
                    continue
                }
                if method == "DELETE" {
                    // First a stale client of the old form, with the live id in the path: refused, logged without it.
                    for old in ["GET", "HEAD", "DELETE"] {
                        let refused = try send(old, "/sessions/\(session)")
                        #expect(
                            refused.status == 404 && (old == "HEAD" || refused.text.contains(#""code":"moved""#)),
                            "\(old): \(refused)")
                    }
                    let read = try send("GET", "/session")
                    #expect(
                        read.status == 200 && read.text.contains(session),
                        "the session is live until the DELETE: \(read)")
                }
                let response = try send(
                    method, request.target, body: method == "GET" || method == "HEAD" ? "" : request.body)
                #expect(
                    (200 ..< 400).contains(response.status), "\(method) \(request.target) with the session: \(response)"
                )
            }
            #expect(try send("GET", "/count").status == 404, "the DELETE ended the session")
            #expect(issued.count >= 2, "POST /sessions issued a second id: \(issued)")

            // nginx writes a line once it has answered: wait for one per request.
            #expect(eventually(within: .seconds(10)) { nginx.accessLog().count >= sent.count }, "\(nginx.accessLog())")
            let nginxLogs = nginx.allLogText()
            server.shutdown()
            serverStopped = true
            serverLog.stop()
            let ownLog = try String(contentsOfFile: logPath, encoding: .utf8)

            // The logs are the ones the requests went to: one line per request in each, naming routes.
            #expect(nginx.accessLog().count == sent.count, "\(nginx.accessLog())")
            #expect(
                nginxLogs.contains(#""GET /session" 200"#) && nginxLogs.contains(#""DELETE /sessions/{id}" 404"#),
                "\(nginxLogs)")
            let requestLines = ownLog.split(separator: "\n").filter { $0.contains("/session") }
            #expect(requestLines.count >= 6, "\(ownLog)")
            for id in issued {
                #expect(!nginxLogs.contains(id), "nginx logged the session id \(id):\n\(nginxLogs)")
                #expect(!ownLog.contains(id), "menu-server logged the session id \(id):\n\(ownLog)")
            }
        }
    }
}
