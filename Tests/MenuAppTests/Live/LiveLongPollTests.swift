import Dispatch
import Foundation
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import Synchronization
import Testing

extension AppTests {
    /// `GET /changes?since=R&wait=S` over a real server: the answer waits, holding no thread, for
    /// a write another connection makes (and carries it), for the session's deletion (404), or for
    /// S seconds (the empty list); `--max-streams` refuses the next with 503 and counts it; a
    /// server that stops answers its long polls at once instead of cutting them off.
    @Suite("Live: long polls of the changes feed")
    struct LiveLongPollTests {
        /// `request` sent on a connection of its own, on a thread of its own (never the test's
        /// cooperative pool); the answer is there once `done` is signalled.
        private final class PendingRequest: Sendable {
            let done = DispatchSemaphore(value: 0)
            private let answer = Mutex<Result<LiveResponse, any Error>?>(nil)

            init(port: Int, _ target: String, session: String?) {
                Thread.detachNewThread { [self] in
                    let result = Result {
                        try LiveRawConnection(port: port, receiveTimeoutSeconds: 90).request(
                            "GET", target, headers: session.map { [("X-Session-Id", $0)] } ?? [])
                    }
                    answer.withLock { $0 = result }
                    done.signal()
                }
            }

            /// The response (waiting at most `seconds`, a bound for a test gone wrong).
            func response(within seconds: Int = 90) throws -> LiveResponse {
                guard done.wait(timeout: .now() + .seconds(seconds)) == .success else {
                    throw LongPollTimedOut(seconds: seconds)
                }
                done.signal()
                return try answer.withLock { $0! }.get()
            }
        }

        private struct LongPollTimedOut: Error { let seconds: Int }

        private static func openWaits(_ connection: LiveRawConnection) throws -> Int {
            Int(LiveMetrics(try connection.request("GET", "/metrics").text)["menu_streams_open"] ?? -1)
        }

        private static func newSession(_ connection: LiveRawConnection) throws -> String {
            try connection.request("POST", "/sessions").decode(LiveSessionBody.self).sessionId
        }

        @Test
        func aLongPollIsAnsweredByAWriteOnAnotherConnectionAndCarriesIt() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            let poll = PendingRequest(port: server.port, "/changes?since=0&wait=60", session: session)
            #expect(eventually { (try? Self.openWaits(connection)) == 1 }, "the long poll is waiting")
            let toggle = try connection.request(
                "POST", "/groups/drinks/toggle", headers: [("X-Session-Id", session)])
            #expect(toggle.status == 200)
            let answer = try poll.response()
            #expect(answer.status == 200)
            let feed = try answer.decode(LiveChanges.self)
            #expect(feed.revision == 1)
            #expect(feed.changes.map(\.revision) == [1])
            #expect(feed.changes.first?.change != nil, "the toggle's splice")
            #expect(try Self.openWaits(connection) == 0)
        }

        @Test
        func aWriteOfAnotherSessionOrOneThatChangesNothingDoesNotAnswerIt() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let (watched, other) = (try Self.newSession(connection), try Self.newSession(connection))
            let poll = PendingRequest(port: server.port, "/changes?since=0&wait=2", session: watched)
            #expect(eventually { (try? Self.openWaits(connection)) == 1 })
            _ = try connection.request("POST", "/groups/drinks/toggle", headers: [("X-Session-Id", other)])
            let unchanged = try connection.request(
                "PUT", "/expansion", headers: [("X-Session-Id", watched)], body: Array(#"{"all":"default"}"#.utf8))
            #expect(unchanged.status == 200)
            // The wait ran out: the answer is the feed as it is, nothing after revision 0.
            let answer = try poll.response()
            #expect(answer.status == 200)
            let feed = try answer.decode(LiveChanges.self)
            #expect(feed.revision == 0 && feed.changes.isEmpty)
        }

        @Test
        func aLongPollOnASessionDeletedMeanwhileAnswers404() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            let poll = PendingRequest(port: server.port, "/changes?since=0&wait=60", session: session)
            #expect(eventually { (try? Self.openWaits(connection)) == 1 })
            #expect(try connection.request("DELETE", "/session", headers: [("X-Session-Id", session)]).status == 204)
            let answer = try poll.response()
            #expect(answer.status == 404)
            #expect(try answer.json()["error"]?["code"]?.stringValue == "unknown_session")
        }

        @Test
        func pastMaxStreamsTheNextLongPollIsRefusedWith503AndCounted() throws {
            let server = try LiveServer { $0.maxStreams = 2 }
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            let polls = (0 ..< 2).map { _ in
                PendingRequest(port: server.port, "/changes?since=0&wait=60", session: session)
            }
            #expect(eventually { (try? Self.openWaits(connection)) == 2 })
            let refused = try connection.request(
                "GET", "/changes?since=0&wait=60", headers: [("X-Session-Id", session)])
            #expect(refused.status == 503)
            #expect(try refused.json()["error"]?["code"]?.stringValue == "too_many_streams")
            #expect(refused.header("Retry-After") == "5")
            // Without wait the feed answers as ever.
            #expect(
                try connection.request("GET", "/changes?since=0", headers: [("X-Session-Id", session)]).status == 200)
            let metrics = LiveMetrics(try connection.request("GET", "/metrics").text)
            #expect(metrics["menu_streams_refused_total"] == 1)
            _ = try connection.request("POST", "/groups/drinks/toggle", headers: [("X-Session-Id", session)])
            for poll in polls { #expect(try poll.response().status == 200) }
            #expect(try Self.openWaits(connection) == 0)
        }

        @Test
        func aServerThatStopsAnswersItsLongPollsInsteadOfCuttingThemOff() throws {
            let server = try LiveServer()
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            let poll = PendingRequest(port: server.port, "/changes?since=0&wait=60", session: session)
            #expect(eventually { (try? Self.openWaits(connection)) == 1 })
            server.shutdown()  // a grace period of 5 s, against a wait of 60
            let answer = try poll.response()
            #expect(answer.status == 200, "\(answer)")
            #expect(try answer.decode(LiveChanges.self).changes.isEmpty)
        }
    }
}
