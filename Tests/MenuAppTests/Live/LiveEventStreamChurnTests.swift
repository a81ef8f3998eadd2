import ChildProcess
import Dispatch
import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuTestSupport
import NaiveReference
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension AppTests {
    /// Event streams against a menu-server child process: 500 clients that open and drop streams
    /// at random leave no descriptor, thread or memory behind; a SIGTERM with streams open ends
    /// each with its final event and the process exits 0.
    @Suite("Live: event streams opened and dropped, and a stop with streams open")
    struct LiveEventStreamChurnTests {
        private static func descriptors(_ pid: pid_t) -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
        }

        private static func status(_ pid: pid_t, _ field: String) -> Int {
            let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
            return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? -1
        }

        private static func openStreams(_ connection: LiveRawConnection) -> Double? {
            LiveMetrics((try? connection.request("GET", "/metrics").text) ?? "")["menu_streams_open"]
        }

        /// One client's way of leaving, picked by `way`.
        private static func churn(port: Int, session: String, way: Int) {
            guard let raw = try? RawHTTPConnection(port: port, receiveTimeoutSeconds: 10) else { return }
            let request =
                "GET /changes?since=0 HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nX-Session-Id: \(session)\r\n\r\n"
            switch way % 4 {
            case 0: try? raw.sendText(String(request.prefix(30)))  // half a request
            case 1: try? raw.sendText(request)  // the whole request, nothing read
            case 2:
                try? raw.sendText(request)
                _ = try? raw.readResponseHead()
            default:
                try? raw.sendText(request)
                _ = try? raw.readResponseHead()
                _ = try? raw.readChunk()  // the open event
            }
        }  // the socket closes here

        @Test
        func fiveHundredClientsThatOpenAndDropStreamsAtRandomLeaveNothingBehind() throws {
            let server = try LiveChildServer(arguments: [
                "--port", "0", "--config", LivePaths.menuConfig, "--stream-heartbeat", "1", "--per-ip-connections", "0",
                "--max-streams", "1000", "--connection-timeout", "5"
            ])
            defer { server.stop() }
            let pid = server.process.pid
            let connection = try LiveRawConnection(port: server.port)
            let sessions = try (0 ..< 20).map { _ in
                try connection.request("POST", "/sessions").decode(LiveSessionBody.self).sessionId
            }
            let port = server.port
            /// 500 clients on 10 threads, each opening a stream and leaving one of four ways, while
            /// 40 writes give the streams events to send; then until every stream is let go.
            func churnRound(_ round: UInt64) throws {
                let done = DispatchGroup()
                for worker in 0 ..< 10 {
                    done.enter()
                    Thread.detachNewThread {
                        var rng = SplitMix64(state: (round << 8 | UInt64(worker)) &* 0x9E37_79B9_7F4A_7C15)
                        for _ in 0 ..< 50 {
                            Self.churn(
                                port: port, session: sessions[Int.random(in: 0 ..< 20, using: &rng)],
                                way: Int.random(in: 0 ..< 4, using: &rng))
                        }
                        done.leave()
                    }
                }
                for index in 0 ..< 40 {
                    _ = try connection.request(
                        "POST", "/groups/drinks/toggle", headers: [("X-Session-Id", sessions[index % 20])])
                }
                #expect(done.wait(timeout: .now() + 120) == .success, "the 500 clients of round \(round) ran")
                // Heartbeats find the clients that left; half-sent requests time out (--connection-timeout 5).
                #expect(eventually(within: .seconds(60)) { Self.openStreams(connection) == 0 }, "round \(round)")
            }
            // The first round brings the heap and the pools to their working size; the second must
            // leave everything as the first left it.
            try churnRound(0)
            let baseline = (
                descriptors: Self.descriptors(pid), threads: Self.status(pid, "Threads"),
                resident: Self.status(pid, "VmRSS")
            )
            try churnRound(1)
            #expect(
                eventually(within: .seconds(60)) { Self.descriptors(pid) <= baseline.descriptors },
                "descriptors \(Self.descriptors(pid)), were \(baseline.descriptors)")
            // No thread per stream (that would be hundreds); Dispatch may keep a worker it started
            // for the streams' looks under the load.
            #expect(
                eventually(within: .seconds(60)) { Self.status(pid, "Threads") <= baseline.threads + 2 },
                "threads \(Self.status(pid, "Threads")), were \(baseline.threads)")
            let grown = Self.status(pid, "VmRSS") - baseline.resident
            // Under AddressSanitizer (scripts/sanitize) freed memory waits in its quarantine (256 MB)
            // instead of being reused, so resident memory says nothing about leaks there.
            if ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil {
                #expect(grown < 2 * 1024, "resident memory grew \(grown) KiB over the second 500 clients")
            }
            print(
                "LiveEventStreamChurnTests: the second 500 clients; descriptors \(baseline.descriptors) → \(Self.descriptors(pid)), "
                    + "threads \(baseline.threads) → \(Self.status(pid, "Threads")), resident +\(grown) KiB")
        }

        @Test
        func aSIGTERMWithStreamsOpenEndsEachWithItsFinalEventAndExitsZero() throws {
            let server = try LiveChildServer(arguments: ["--port", "0", "--config", LivePaths.menuConfig])
            defer { server.stop() }
            let connection = try LiveRawConnection(port: server.port)
            let session = try connection.request("POST", "/sessions").decode(LiveSessionBody.self).sessionId
            let streams = try (0 ..< 20).map { _ in
                try LiveEventStream(port: server.port, "/changes?since=0", headers: [("X-Session-Id", session)])
            }
            for stream in streams { #expect(try stream.nextEvent()?.event == "open") }
            #expect(server.signalAndWait(SIGTERM), "it exits on its own")
            #expect(server.termination == .exited(0))
            for stream in streams {
                let end = try #require(try stream.nextEvent())
                #expect(try end.event == "end" && end.json()["reason"]?.stringValue == "server_stopping", "\(end)")
                #expect(try stream.next() == nil)
            }
        }
    }
}
