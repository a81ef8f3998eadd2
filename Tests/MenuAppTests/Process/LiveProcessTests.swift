// Live tests of the built `menu-server` executable as a child process: the listening line on
// stdout, real HTTP clients (URLSession, raw socket, curl), SIGTERM → exit 0, and exit 2 with a
// message on stderr for bad flags and invalid configs. `swift build` / `swift test` must have
// built the executable; these tests never build it.

import ChildProcess
import Foundation
import MenuAppTestSupport
import MenuServiceTestSupport
import MenuTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension AppTests {
    @Suite("Live: the menu-server executable")
    struct LiveProcessTests {

        @Test
        func executablePrintsOneListeningLineServesHTTPAndExitsZeroOnSIGTERM() async throws {
            let child = try LiveChildServer()
            defer { child.stop() }
            #expect(child.listeningLine == "menu-server listening on http://127.0.0.1:\(child.port)")

            // URLSession
            let client = LiveHTTPClient(baseURL: child.baseURL)
            let health = try await client.get("/healthz")
            #expect(health.status == 200)
            liveExpectJSONHeaders(health)
            #expect(health.text == #"{"status":"ok"}"#)
            let count = try await client.get("/count").decode(LiveCount.self)
            #expect(count.count == 30)
            #expect(count.leafCount == 24)
            let change = try await client.toggle("main-courses")
            #expect(change.status == 200)
            let body = try change.decode(LiveChange.self)
            #expect(change.header("X-Session-Id") == body.sessionId)
            #expect(body.change == LiveSplice(at: 1, inserted: 0, removed: 9))
            let mine = try await client.get("/count", session: body.sessionId).decode(LiveCount.self)
            #expect(mine.count == 21)

            // A raw socket
            let raw = try LiveRawConnection(port: child.port).request("GET", "/rows?offset=1&limit=1")
            #expect(raw.status == 200)
            #expect(raw.body.contains(Array("宮保雞丁".utf8)))

            // curl, when the machine has it
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") {
                let curl = try liveRun(
                    URL(fileURLWithPath: "/usr/bin/curl"),
                    [
                        "-sS", "-i", "-X", "PUT", "-H", "Content-Type: application/json",
                        "-H", "X-Session-Id: \(body.sessionId)", "--data", #"{"isExpanded":true}"#,
                        "\(child.baseURL)/groups/main-courses/expansion"
                    ])
                #expect(curl.status == 0, "\(curl.stderr)")
                #expect(curl.stdout.hasPrefix("HTTP/1.1 200"), "\(curl.stdout)")
                #expect(curl.stdout.lowercased().contains("cache-control: no-store"), "\(curl.stdout)")
                #expect(curl.stdout.contains(#""change":{"at":1,"inserted":9,"removed":0}"#), "\(curl.stdout)")
            }

            #expect(child.signalAndWait(SIGTERM), "menu-server did not exit after SIGTERM")
            #expect(child.termination == .exited(0))
            #expect(child.remainingStdout() == "", "only the listening line belongs on stdout")
            #expect(child.stderrText.value.contains("signal 15"), "\(child.stderrText.value)")
        }

        @Test
        func executableExitsZeroOnSIGTERMWithAnIdleKeepAliveConnectionOpenAndClosesIt() throws {
            let child = try LiveChildServer()
            defer { child.stop() }
            let connection = try LiveRawConnection(port: child.port)
            for target in ["/healthz", "/count"] {
                let response = try connection.request("GET", target)
                #expect(response.status == 200)
                #expect(response.header("Connection")?.lowercased() != "close", "\(response.head)")
            }
            // The connection now sits idle: the child exits on its own and closes it. (That shutdown
            // does not sit out the grace period for an idle connection is shown without timing the
            // child, in HTTPServerTests.shutdownDoesNotWaitForIdleKeepAliveConnections, with a grace
            // period four times its bound on the wait; the child's is fixed at 10 s.)
            #expect(child.signalAndWait(SIGTERM), "menu-server did not exit after SIGTERM")
            #expect(child.termination == .exited(0))
            #expect(connection.isClosedByPeer())
        }

        @Test
        func executableExitsZeroOnSIGINT() throws {
            let child = try LiveChildServer()
            defer { child.stop() }
            #expect(try LiveRawConnection(port: child.port).request("GET", "/healthz").status == 200)
            #expect(child.signalAndWait(SIGINT))
            #expect(child.termination == .exited(0))
        }

        struct BadFlags: Sendable, CustomTestStringConvertible {
            var arguments: [String]
            var mentions: [String]
            var testDescription: String { arguments.joined(separator: " ") }
        }

        @Test(arguments: [
            BadFlags(arguments: ["--port", "abc"], mentions: ["--port", "abc"]),
            BadFlags(arguments: ["--port=abc"], mentions: ["--port", "abc"]),
            BadFlags(arguments: ["--port", "70000"], mentions: ["--port", "70000"]),
            BadFlags(arguments: ["--port", "-1"], mentions: ["--port", "-1"]),
            BadFlags(arguments: ["--threads", "0"], mentions: ["--threads", "0"]),
            BadFlags(arguments: ["--port"], mentions: ["--port"]),
            BadFlags(arguments: ["--bogus", "1"], mentions: ["--bogus"])
        ])
        func executableRejectsABadFlagWithExitCode2AndNamesIt(bad: BadFlags) throws {
            let exit = try liveRun(try LivePaths.executable(), bad.arguments)
            #expect(exit.exited, "\(exit.termination)")
            #expect(exit.status == 2)
            #expect(exit.stdout.isEmpty, "\(exit.stdout)")
            #expect(exit.stderr.hasPrefix("menu-server: "), "\(exit.stderr)")
            for mention in bad.mentions {
                #expect(exit.stderr.contains(mention), "stderr should name \(mention): \(exit.stderr)")
            }
        }

        struct BadConfig: Sendable, CustomTestStringConvertible {
            var name: String
            var contents: String?
            var mentions: [String]
            var testDescription: String { name }
        }

        @Test(arguments: [
            BadConfig(
                name: "invalid id",
                contents: #"{"title":"x","items":[{"id":"ok","title":"A"},{"id":"bad id!","title":"B"}]}"#,
                mentions: ["items[1].id", "bad id!"]),
            BadConfig(
                name: "empty nested title",
                contents: #"{"title":"x","items":[{"id":"g","title":"G","items":[{"id":"r","title":""}]}]}"#,
                mentions: ["items[0].items[0].title"]),
            BadConfig(
                name: "duplicate id",
                contents: #"{"title":"x","items":[{"id":"a","title":"A"},{"id":"a","title":"B"}]}"#,
                mentions: ["items[1].id", "items[0]"]),
            BadConfig(name: "not JSON", contents: #"{"title":"#, mentions: ["JSON"]),
            BadConfig(name: "missing file", contents: nil, mentions: [])
        ])
        func executableRejectsAnInvalidConfigWithExitCode2AndNamesTheJSONPath(bad: BadConfig) throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("menu-server-live-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = directory.appendingPathComponent("menu.json")
            if let contents = bad.contents {
                try Data(contents.utf8).write(to: config)
            }
            let exit = try liveRun(try LivePaths.executable(), ["--port", "0", "--config", config.path])
            #expect(exit.exited, "\(exit.termination)")
            #expect(exit.status == 2)
            #expect(exit.stdout.isEmpty, "no listening line expected: \(exit.stdout)")
            #expect(exit.stderr.hasPrefix("menu-server: "), "\(exit.stderr)")
            #expect(exit.stderr.contains(config.path), "stderr should name the file: \(exit.stderr)")
            for mention in bad.mentions {
                #expect(exit.stderr.contains(mention), "stderr should name \(mention): \(exit.stderr)")
            }
        }
    }
}
