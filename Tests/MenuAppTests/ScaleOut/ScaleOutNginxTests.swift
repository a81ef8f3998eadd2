// nginx in front of several instances (issue 16): Config/nginx.conf, the example for three
// instances on one Redis, passes `nginx -t`; and the tests' own NginxProcess spreads requests
// round-robin over real menu-server instances and sends each request to exactly one of them.

import ChildProcess
import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuTestSupport
import NginxTestSupport
import Testing

extension AppTests {
    @Suite(
        "nginx in front of menu-server instances",
        .enabled(if: FileManager.default.isExecutableFile(atPath: NginxProcess.executable)))
    struct ScaleOutNginxTests {
        static let examplePath = LivePaths.packageRoot.appendingPathComponent("Config/nginx.conf").path

        /// The example with Debian's log, state and pid directories moved into `directory` (nginx -t
        /// opens its files and creates its temporary directories), and how many paths were moved.
        private func relocatedExample(into directory: String) throws -> (path: String, moved: Int) {
            var text = try String(contentsOfFile: Self.examplePath, encoding: .utf8)
            var moved = 0
            for prefix in ["/var/log/nginx/", "/var/lib/nginx/", "/run/"] {
                moved += text.components(separatedBy: prefix).count - 1
                text = text.replacingOccurrences(of: prefix, with: directory + "/")
            }
            let path = directory + "/nginx.conf"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return (path, moved)
        }

        private func nginxTest(_ config: String, prefix: String) throws -> (ok: Bool, output: String) {
            let outcome = try ChildProcess.run(
                executable: NginxProcess.executable,
                arguments: ["-t", "-p", prefix, "-e", prefix + "/error.log", "-c", config],
                timeout: .seconds(30))
            return (
                outcome.termination == .exited(0),
                String(decoding: outcome.standardOutput + outcome.standardError, as: UTF8.self)
            )
        }

        @Test func theExampleConfigPassesNginxT() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "nginx-example-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let (config, moved) = try relocatedExample(into: directory)
            #expect(moved == 8, "the pid, two logs and five temporary paths")
            let checked = try nginxTest(config, prefix: directory)
            #expect(checked.ok, "\(checked.output)")
            #expect(checked.output.contains("test is successful"))
            // The check can fail: a misspelt directive is refused.
            let broken = directory + "/broken.conf"
            try (try String(contentsOfFile: config, encoding: .utf8)).replacingOccurrences(
                of: "proxy_next_upstream error timeout;", with: "proxy_next_upstream eror timeout;"
            )
            .write(toFile: broken, atomically: true, encoding: .utf8)
            #expect(try !nginxTest(broken, prefix: directory).ok)
        }

        @Test func theExampleNeverSendsAPOSTToASecondInstance() throws {
            let text = try String(contentsOfFile: Self.examplePath, encoding: .utf8)
            let directives = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                !$0.hasPrefix("#")
            }
            #expect(directives.contains("proxy_next_upstream error timeout;"))
            #expect(
                !directives.contains { $0.contains("non_idempotent") || $0.contains("http_503") },
                "a POST or a 503 must not go to another instance")
            #expect(
                directives.filter { $0.hasPrefix("server 127.0.0.1:808") }.count == 3
                    && directives.contains("keepalive 32;"))
        }

        @Test
        func nginxSpreadsRequestsRoundRobinAndSendsEachToOneInstance() throws {
            let first = try LiveServer()
            defer { first.shutdown() }
            let second = try LiveServer()
            defer { second.shutdown() }
            let nginx = try NginxProcess(upstreams: [first.port, second.port])
            defer { nginx.stop() }
            let connection = try LiveRawConnection(port: nginx.port)
            for _ in 0 ..< 6 { #expect(try connection.request("GET", "/healthz").status == 200) }
            let created = try connection.request("POST", "/sessions")
            #expect(created.status == 201)
            // Each instance has its own memory store: the session is on the instance that made it only.
            let id = try #require(created.header("X-Session-Id"))
            let found = [first, second].filter {
                (try? LiveRawConnection(port: $0.port).request("GET", "/count", headers: [("X-Session-Id", id)]).status)
                    == 200
            }
            #expect(found.count == 1, "the POST reached one instance")
            // nginx writes a line once it has answered: wait for the seven.
            _ = eventually(within: .seconds(10)) { nginx.accessLog().count >= 7 }
            let log = nginx.accessLog()
            let upstreams = log.filter { $0.hasPrefix("GET /healthz ") }.map {
                $0.split(separator: " ").last.map(String.init) ?? ""
            }
            #expect(upstreams.count == 6)
            #expect(Set(upstreams) == ["127.0.0.1:\(first.port)", "127.0.0.1:\(second.port)"], "\(log)")
            #expect(log.filter { $0.hasPrefix("POST /sessions 201 127.0.0.1:") }.count == 1, "\(log)")
        }
    }
}
