import Dispatch
import Foundation
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import Testing

extension AppTests {
    /// Hostile `wait` parameters, `Last-Event-ID` and `Accept` headers of `GET /changes` over a raw
    /// socket (a 400 naming it, or the plain feed, never a 5xx, no session changed), and a flood of long polls past `--max-streams` from many
    /// connections: the excess is refused with 503 and counted, the server goes on answering, and
    /// once released no waiter is left.
    @Suite("Hostile input: long polls and event streams of the changes feed")
    struct HostileLongPollTests {
        static let cases: [HostileCase] = {
            let h = HostileCase.host
            let refused = HostileCase.Outcome.json(400, "invalid_parameter")
            @Sendable func changes(_ query: String) -> String { "GET /changes?\(query) HTTP/1.1\r\n\(h)\r\n" }
            @Sendable func stream(_ headers: String) -> String {
                "GET /changes?since=0 HTTP/1.1\r\n\(h)Accept: text/event-stream\r\n\(headers)\r\n"
            }
            return [
                HostileCase.text("wait negative", refused) { changes("since=0&wait=-1") },
                HostileCase.text("wait past 60", refused) { changes("since=0&wait=61") },
                HostileCase.text("wait of 20 digits", refused) { changes("since=0&wait=99999999999999999999") },
                HostileCase.text("wait not a number", refused) { changes("since=0&wait=soon") },
                HostileCase.text("wait fractional", refused) { changes("since=0&wait=1.5") },
                HostileCase.text("wait empty", refused) { changes("since=0&wait=") },
                HostileCase.text("wait without a value", refused) { changes("since=0&wait") },
                HostileCase.text("wait given twice", refused) { changes("since=0&wait=1&wait=2") },
                HostileCase.text("wait with a percent-encoded NUL", refused) { changes("since=0&wait=1%00") },
                HostileCase.text("wait without since", refused) { changes("wait=5") },
                HostileCase.text("wait zero answers at once", .json(200, "")) { changes("since=0&wait=0") },
                // availabilitySince: the same integer grammar; one the overlays never had asks for every row.
                HostileCase.text("availabilitySince negative", refused) { changes("since=0&availabilitySince=-1") },
                HostileCase.text("availabilitySince of 20 digits", refused) {
                    changes("since=0&availabilitySince=99999999999999999999")
                },
                HostileCase.text("availabilitySince not a number", refused) { changes("since=0&availabilitySince=x") },
                HostileCase.text("availabilitySince empty", refused) { changes("since=0&availabilitySince=") },
                HostileCase.text("availabilitySince twice", refused) {
                    changes("since=0&availabilitySince=0&availabilitySince=1")
                },
                HostileCase.text("availabilitySince with a percent-encoded NUL", refused) {
                    changes("since=0&availabilitySince=0%00")
                },
                HostileCase.text("availabilitySince never served", .json(200, "")) {
                    changes("since=0&availabilitySince=9223372036854775807")
                },
                HostileCase.text("availabilitySince on a stream", .json(400, "invalid_parameter")) {
                    "GET /changes?since=0&availabilitySince=-5 HTTP/1.1\r\n\(h)Accept: text/event-stream\r\n\r\n"
                },
                // Event streams: a Last-Event-ID this server never sent is refused, never guessed at;
                // an Accept that does not name text/event-stream (or refuses it) gets the JSON feed.
                HostileCase.text("Last-Event-ID not a number", refused) { stream("Last-Event-ID: soon\r\n") },
                HostileCase.text("Last-Event-ID negative", refused) { stream("Last-Event-ID: -1\r\n") },
                HostileCase.text("Last-Event-ID of 19 digits", refused) {
                    stream("Last-Event-ID: 1234567890123456789\r\n")
                },
                HostileCase.text("Last-Event-ID with a space inside", refused) { stream("Last-Event-ID: 1 2\r\n") },
                HostileCase.text("Last-Event-ID twice, disagreeing", refused) {
                    stream("Last-Event-ID: 0\r\nLast-Event-ID: 1\r\n")
                },
                HostileCase.text("Last-Event-ID past the revision", refused) { stream("Last-Event-ID: 5\r\n") },
                HostileCase.bytes("Last-Event-ID with obs-text", refused) {
                    Array("GET /changes?since=0 HTTP/1.1\r\n\(h)Accept: text/event-stream\r\nLast-Event-ID: 1".utf8)
                        + [0xFF] + Array("\r\n\r\n".utf8)
                },
                HostileCase.text("Accept text/event-stream;q=0", .json(200, "")) {
                    "GET /changes?since=0 HTTP/1.1\r\n\(h)Accept: text/event-stream;q=0\r\n\r\n"
                },
                HostileCase.text("Accept text/event-stream-ish", .json(200, "")) {
                    "GET /changes?since=0 HTTP/1.1\r\n\(h)Accept: text/event-streamx, text/event, */*\r\n\r\n"
                },
                HostileCase.text("Accept of only separators", .json(200, "")) {
                    "GET /changes?since=0 HTTP/1.1\r\n\(h)Accept: ,;,;=;q=\r\n\r\n"
                },
                HostileCase.text("Accept of 2,000 elements", .json(200, ""), .mhd(431)) {
                    "GET /changes?since=0 HTTP/1.1\r\n\(h)Accept: \(Array(repeating: "a/b;q=0.5", count: 2_000).joined(separator: ","))\r\n\r\n"
                }
            ]
        }()

        @Test(arguments: cases)
        func aHostileWaitIsNeverA5xxAndChangesNoSession(_ hostile: HostileCase) async throws {
            try await HostileInputTests.expectRefusedWithoutChange(hostile)
        }

        @Test
        func aFloodOfLongPollsPastMaxStreamsIsRefusedWith503AndLeavesNoWaiterBehind() throws {
            let server = try LiveServer { $0.maxStreams = 10 }
            defer { server.shutdown() }
            let port = server.port
            let connection = try server.connect()
            let session = try connection.request("POST", "/sessions").decode(LiveSessionBody.self).sessionId
            // 40 connections each ask for a long poll of one session at once, on threads of their own.
            let statuses = LiveLocked<[Int]>([])
            let done = DispatchGroup()
            for _ in 0 ..< 40 {
                done.enter()
                Thread.detachNewThread {
                    defer { done.leave() }
                    let status =
                        (try? LiveRawConnection(port: port, receiveTimeoutSeconds: 90).request(
                            "GET", "/changes?since=0&wait=60", headers: [("X-Session-Id", session)]
                        ).status) ?? -1
                    statuses.update { $0.append(status) }
                }
            }
            // The 30 refused answer at once; then the server answers everything else meanwhile.
            #expect(eventually(within: .seconds(60)) { statuses.value.count == 30 })
            #expect(statuses.value.allSatisfy { $0 == 503 })
            #expect(try connection.request("GET", "/healthz").status == 200)
            #expect(try connection.request("GET", "/rows?limit=3", headers: [("X-Session-Id", session)]).status == 200)
            let metrics = LiveMetrics(try connection.request("GET", "/metrics").text)
            #expect(metrics["menu_streams_open"] == 10 && metrics["menu_streams_refused_total"] == 30)
            // One write releases the ten held.
            _ = try connection.request("POST", "/groups/drinks/toggle", headers: [("X-Session-Id", session)])
            done.wait()
            #expect(statuses.value.filter { $0 == 200 }.count == 10)
            #expect(LiveMetrics(try connection.request("GET", "/metrics").text)["menu_streams_open"] == 0)
        }
    }
}
