// Live tests of the built `menu-server` executable as a child process: the listening line on
// stdout, real HTTP clients (URLSession, raw socket, curl), SIGTERM → exit 0, and exit 2 with a
// message on stderr for bad flags and invalid configs. `swift build` / `swift test` must have
// built the executable; these tests never build it.

import ChildProcess
import Foundation
import Testing
import MenuServiceTestSupport
import MenuTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `menu-server` child process started with `--port 0`, its port read from its first stdout line.
final class LiveChildServer {
    let process: ChildProcess
    let stderrText = LiveLocked("")
    let stderrDone = DispatchGroup()
    private(set) var listeningLine = ""
    private(set) var port = 0
    /// How the child ended, once ``signalAndWait(_:timeoutSeconds:)`` has seen it end.
    private(set) var termination: ChildProcess.Termination?

    init(arguments: [String] = ["--port", "0", "--config", LivePaths.menuConfig]) throws {
        process = try ChildProcess(
            executable: try LivePaths.executable().path, arguments: arguments,
            environment: liveChildEnvironment(), workingDirectory: LivePaths.packageRoot.path,
            standardOutput: .pipe, standardError: .pipe)
        // Drain stderr in the background so the child never blocks on it; `stderrText` grows as
        // lines arrive, so a test can wait for a log line while the child runs.
        let errors = process.standardError!
        let text = stderrText
        stderrDone.enter()
        let done = stderrDone
        DispatchQueue.global().async {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                bytes.append(contentsOf: buffer[..<count])
                text.set(String(decoding: bytes, as: UTF8.self))
            }
            done.leave()
        }
        guard let line = ChildProcess.readLine(from: process.standardOutput!, timeout: .seconds(20)) else {
            stop()
            throw LiveError("menu-server printed no line within 20 s; stderr: \(stderrText.value)")
        }
        listeningLine = line
        let prefix = "menu-server listening on http://127.0.0.1:"
        guard line.hasPrefix(prefix), let port = Int(line.dropFirst(prefix.count)), (1 ... 65535).contains(port) else {
            stop()
            throw LiveError("unexpected first line \(String(reflecting: line))")
        }
        self.port = port
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Sends `signal` and waits (at most `timeoutSeconds`) for the exit; false if it had to be killed.
    func signalAndWait(_ signal: Int32 = SIGTERM, timeoutSeconds: Double = 20) -> Bool {
        process.send(signal)
        let (ended, onItsOwn) = process.waitOrKill(timeout: .milliseconds(Int(timeoutSeconds * 1000)))
        termination = ended
        _ = stderrDone.wait(timeout: .now() + 30)  // returns at end of stream
        return onItsOwn
    }

    /// Everything the child wrote to stdout after the listening line (call after it exited).
    func remainingStdout() -> String {
        String(decoding: ChildProcess.readToEnd(process.standardOutput!), as: UTF8.self)
    }

    /// Kills the child if it still runs (a failed test must not leave it behind).
    func stop() {
        process.send(SIGKILL)
        _ = process.wait(timeout: .seconds(10))
        _ = stderrDone.wait(timeout: .now() + 30)  // returns at end of stream
    }

    deinit { stop() }
}

@Suite("Live: the menu-server executable")
struct LiveProcessTests {

    @Test(.timeLimit(.minutes(5)))
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
            let curl = try liveRun(URL(fileURLWithPath: "/usr/bin/curl"),
                                   ["-sS", "-i", "-X", "PUT", "-H", "Content-Type: application/json",
                                    "-H", "X-Session-Id: \(body.sessionId)", "--data", #"{"isExpanded":true}"#,
                                    "\(child.baseURL)/groups/main-courses/expansion"])
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

    @Test(.timeLimit(.minutes(5)))
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

    @Test(.timeLimit(.minutes(5)))
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

    @Test(.timeLimit(.minutes(5)), arguments: [
        BadFlags(arguments: ["--port", "abc"], mentions: ["--port", "abc"]),
        BadFlags(arguments: ["--port=abc"], mentions: ["--port", "abc"]),
        BadFlags(arguments: ["--port", "70000"], mentions: ["--port", "70000"]),
        BadFlags(arguments: ["--port", "-1"], mentions: ["--port", "-1"]),
        BadFlags(arguments: ["--threads", "0"], mentions: ["--threads", "0"]),
        BadFlags(arguments: ["--port"], mentions: ["--port"]),
        BadFlags(arguments: ["--bogus", "1"], mentions: ["--bogus"]),
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

    @Test(.timeLimit(.minutes(5)), arguments: [
        BadConfig(name: "invalid id", contents: #"{"title":"x","items":[{"id":"ok","title":"A"},{"id":"bad id!","title":"B"}]}"#,
                  mentions: ["items[1].id", "bad id!"]),
        BadConfig(name: "empty nested title", contents: #"{"title":"x","items":[{"id":"g","title":"G","items":[{"id":"r","title":""}]}]}"#,
                  mentions: ["items[0].items[0].title"]),
        BadConfig(name: "duplicate id", contents: #"{"title":"x","items":[{"id":"a","title":"A"},{"id":"a","title":"B"}]}"#,
                  mentions: ["items[1].id", "items[0]"]),
        BadConfig(name: "not JSON", contents: #"{"title":"#, mentions: ["JSON"]),
        BadConfig(name: "missing file", contents: nil, mentions: []),
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
