// The menu-server process on a real Redis store with pipelined writes, stopped by SIGTERM while
// keep-alive connections keep writing: every stop must exit 0, and every request must get a whole
// answer or a connection closed before any byte of one. `swift build` must have built the
// executable; this test never builds it.

import ChildProcess
import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuTestSupport
import RedisTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension AppTests {
    @Suite(
        "Redis: stopping menu-server while keep-alive connections write",
        .enabled(if: FileManager.default.isExecutableFile(atPath: RedisServerProcess.executable)))
    struct StopUnderWritesProcessTests {
        static let rounds = 100
        static let writers = 16
        /// Toggles answered on every connection (on average) before the signal goes out.
        static let togglesBeforeSignal = 4

        @Test
        func sigtermWhileSixteenKeepAliveConnectionsToggleAlwaysExitsZeroAndCutsNoAnswerShort() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            var aborted: [Int] = []
            var answeredWhileStopping = 0
            for round in 1 ... Self.rounds {
                let outcome = try Self.stopWhileWriting(on: redis)
                if outcome.termination != .exited(0) { aborted.append(round) }
                answeredWhileStopping += outcome.tally.answeredAfterSignal
                #expect(outcome.termination == .exited(0), "round \(round): \(outcome)")
                #expect(outcome.tally.cutShort == 0 && outcome.tally.unexpected.isEmpty, "round \(round): \(outcome)")
                // The stop really came mid-run: answers had been received on every connection.
                #expect(
                    outcome.tally.answeredBeforeSignal >= Self.writers * Self.togglesBeforeSignal,
                    "round \(round): \(outcome)")
            }
            #expect(aborted.isEmpty, "menu-server did not exit 0 in rounds \(aborted) of \(Self.rounds)")
            // Writes were in flight when the signals came: the stop was tested, not an idle server.
            #expect(answeredWhileStopping > 0)
        }

        /// One round: a fresh menu-server, `writers` connections toggling their own sessions, SIGTERM
        /// once `togglesBeforeSignal` toggles per connection have been answered.
        private static func stopWhileWriting(on redis: RedisServerProcess) throws -> RoundOutcome {
            let child = try LiveChildServer(arguments: [
                "--port", "0", "--config", LivePaths.menuConfig, "--store", redis.url,
                "--redis-pipeline", "on", "--quiet"
            ])
            defer { child.stop() }
            let round = Round()
            let writersDone = DispatchGroup()
            for _ in 0 ..< writers {
                writersDone.enter()
                let port = child.port
                Thread {
                    defer { writersDone.leave() }
                    toggleUntilClosed(port: port, round)
                }.start()
            }
            _ = eventually { round.tally.withLock { $0.answeredBeforeSignal } >= writers * togglesBeforeSignal }
            round.signalled.store(true, ordering: .sequentiallyConsistent)
            _ = child.signalAndWait(SIGTERM, timeoutSeconds: 30)
            let writersEnded = writersDone.wait(timeout: .now() + 30) == .success
            var final = round.tally.withLock { $0 }
            if !writersEnded { final.unexpected.append("a writer was still waiting 30 s after the process ended") }
            return RoundOutcome(termination: child.termination, tally: final)
        }

        /// One keep-alive connection: creates a session, then toggles a group until the server
        /// closes the connection or answers with `Connection: close`. It pauses up to 8 ms between
        /// requests (a client's think time), so that the signal finds connections both busy and idle
        /// and the idle ones send their next write at any moment of the stop.
        private static func toggleUntilClosed(port: Int, _ round: Round) {
            let connection: RawHTTPConnection
            do {
                connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 20, sendTimeoutSeconds: 20)
            } catch {
                if !round.signalled.load(ordering: .sequentiallyConsistent) {
                    round.tally.withLock { $0.unexpected.append("connect: \(error)") }
                }
                return
            }
            var session: String?
            while true {
                let before = !round.signalled.load(ordering: .sequentiallyConsistent)
                let answer: RawHTTPResponse?
                do {
                    if let session {
                        try connection.sendRequest(
                            "POST", "/groups/main-courses/toggle", headers: [("X-Session-Id", session)])
                    } else {
                        try connection.sendRequest("POST", "/sessions")
                    }
                    answer = try connection.readResponseOrClosure()
                } catch RawHTTPError.send {
                    answer = nil  // the server closed the connection before this request: no byte of an answer
                } catch RawHTTPError.closedBeforeResponseEnded {
                    round.tally.withLock { $0.cutShort += 1 }
                    return
                } catch {
                    round.tally.withLock { $0.unexpected.append("\(error)") }
                    return
                }
                guard let answer else {
                    round.tally.withLock { $0.closedBeforeAnswer += 1 }
                    return
                }
                let expected = session == nil ? 201 : 200
                let stopping = answer.status == 503 && answer.header("Retry-After") != nil
                guard answer.status == expected || stopping else {
                    round.tally.withLock { $0.unexpected.append("\(answer)") }
                    return
                }
                round.tally.withLock {
                    if before { $0.answeredBeforeSignal += 1 } else { $0.answeredAfterSignal += 1 }
                    if stopping { $0.unavailable += 1 }
                }
                if answer.header("Connection")?.lowercased() == "close" { return }
                if session == nil {
                    guard let created = try? JSONDecoder().decode(LiveSessionBody.self, from: Data(answer.body)) else {
                        round.tally.withLock { $0.unexpected.append("no session id in \(answer)") }
                        return
                    }
                    session = created.sessionId
                }
                usleep(UInt32.random(in: 0 ..< 8_000))
            }
        }
    }
}

/// What the writers of one round share: whether the signal has gone out, and what they saw.
private final class Round: Sendable {
    let signalled = Atomic<Bool>(false)
    let tally = Mutex(WriteTally())
}

/// What the writers of one round saw.
private struct WriteTally: Sendable, CustomStringConvertible {
    /// Whole answers (201, 200, or 503 with Retry-After) read before and after the signal.
    var answeredBeforeSignal = 0
    var answeredAfterSignal = 0
    /// Of those, 503s.
    var unavailable = 0
    /// Connections the server closed before sending any byte of an answer.
    var closedBeforeAnswer = 0
    /// Answers cut short: the connection closed in the middle of one.
    var cutShort = 0
    /// Anything else (another status, a timeout).
    var unexpected: [String] = []

    var description: String {
        "answered \(answeredBeforeSignal) before the signal and \(answeredAfterSignal) after (\(unavailable) of them 503), "
            + "\(closedBeforeAnswer) closed before an answer, \(cutShort) cut short, unexpected \(unexpected)"
    }
}

private struct RoundOutcome: CustomStringConvertible {
    let termination: ChildProcess.Termination?
    let tally: WriteTally

    var description: String { "\(termination.map { "\($0)" } ?? "not ended"); \(tally)" }
}
