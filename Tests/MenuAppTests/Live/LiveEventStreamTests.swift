import Foundation
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import MenuService
import MenuTestSupport
import Testing

extension AppTests {
    /// `GET /changes` with `Accept: text/event-stream` over a real server: an `open` event that says
    /// what to do (nothing, apply, reload), each later write as a `change` event whose `id` is its
    /// revision, `Last-Event-ID` to resume, heartbeats, a final `end` event when the session goes
    /// or the server stops, and `--max-streams` shared with the long polls.
    @Suite("Live: the changes feed as server-sent events")
    struct LiveEventStreamTests {
        private static func newSession(_ connection: LiveRawConnection) throws -> String {
            try connection.request("POST", "/sessions").decode(LiveSessionBody.self).sessionId
        }

        /// A stream of `session`'s changes since `since` on `server`.
        private static func stream(
            _ server: LiveServer, _ session: String, since: String = "0", lastEventID: String? = nil
        ) throws -> LiveEventStream {
            try LiveEventStream(
                port: server.port, "/changes?since=\(since)",
                headers: [("X-Session-Id", session)] + (lastEventID.map { [("Last-Event-ID", $0)] } ?? []))
        }

        private static func toggle(_ group: String, _ session: String, on connection: LiveRawConnection) throws {
            let answer = try connection.request("POST", "/groups/\(group)/toggle", headers: [("X-Session-Id", session)])
            #expect(answer.status == 200, "\(answer)")
        }

        private static func feed(since: Int, _ session: String, on connection: LiveRawConnection) throws -> LiveJSON {
            try connection.request("GET", "/changes?since=\(since)", headers: [("X-Session-Id", session)]).json()
        }

        @Test
        func aStreamOpensSayingThereIsNothingThenCarriesEachWriteAsTheFeedWould() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            let stream = try Self.stream(server, session)
            #expect(stream.head.status == 200)
            #expect(stream.head.header("Content-Type") == "text/event-stream")
            #expect(stream.head.header("Cache-Control") == "no-store")
            #expect(stream.head.header("X-Accel-Buffering") == "no")
            #expect(stream.head.header("Transfer-Encoding") == "chunked")
            let open = try #require(try stream.nextEvent())
            #expect(open.event == "open" && open.id == "0" && open.retry == 3_000, "\(open)")
            let opened = try open.json()
            #expect(
                opened["action"]?.stringValue == "none" && opened["since"] == .number(0)
                    && opened["revision"] == .number(0))
            #expect(opened["version"] == (try Self.feed(since: 0, session, on: connection))["version"])

            for (index, group) in ["drinks", "breakfast", "drinks"].enumerated() {
                try Self.toggle(group, session, on: connection)
                let event = try #require(try stream.nextEvent())
                #expect(event.event == "change" && event.id == "\(index + 1)", "\(event)")
                let entry = try #require(
                    try Self.feed(since: index, session, on: connection)["changes"]?.arrayValue?.first)
                #expect(try event.json() == entry, "the event's data is the feed's entry")
            }
            let metrics = LiveMetrics(try connection.request("GET", "/metrics").text)
            #expect(metrics["menu_event_streams_open"] == 1 && metrics["menu_streams_open"] == 1)
        }

        @Test
        func aStreamBehindItsSessionOpensWithApplyAndTheMissedChanges() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            for group in ["drinks", "breakfast"] { try Self.toggle(group, session, on: connection) }
            let stream = try Self.stream(server, session)
            let open = try #require(try stream.nextEvent())
            #expect(open.event == "open" && open.id == "0")
            #expect(try open.json()["action"]?.stringValue == "apply" && open.json()["revision"] == .number(2))
            #expect(try stream.nextEvent()?.id == "1")
            #expect(try stream.nextEvent()?.id == "2")
        }

        @Test
        func aStreamFromBeforeTheHistoryOpensWithReloadAndGoesOnFromNow() throws {
            let server = try LiveServer { $0.changeHistory = 2 }
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            for group in ["drinks", "breakfast", "drinks", "breakfast"] {
                try Self.toggle(group, session, on: connection)
            }
            let stream = try Self.stream(server, session)
            let open = try #require(try stream.nextEvent())
            #expect(open.event == "open" && open.id == "4", "a reconnect resumes after the reload, not before")
            #expect(try open.json()["action"]?.stringValue == "reload" && open.json()["revision"] == .number(4))
            try Self.toggle("drinks", session, on: connection)
            #expect(try stream.nextEvent()?.id == "5")
        }

        @Test
        func lastEventIDResumesWhereTheClientLeftOffWhateverSinceSays() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            for group in ["drinks", "breakfast", "drinks"] { try Self.toggle(group, session, on: connection) }
            let stream = try Self.stream(server, session, lastEventID: "2")
            let open = try #require(try stream.nextEvent())
            #expect(try open.json()["since"] == .number(2) && open.json()["action"]?.stringValue == "apply")
            #expect(try stream.nextEvent()?.id == "3", "only what came after event 2")
            // An id this server never sent is refused, not guessed at.
            for bad in ["x", "-1", "1.5", "12345678901234567890", "1 2"] {
                let refused = try Self.stream(server, session, lastEventID: bad)
                #expect(refused.head.status == 400, "Last-Event-ID \(bad)")
                #expect(String(decoding: refused.head.body, as: UTF8.self).contains("invalid_parameter"))
            }
            // Past the session's revision: as the feed answers it.
            let ahead = try LiveEventStream(
                port: server.port, "/changes", headers: [("X-Session-Id", session), ("Last-Event-ID", "9")])
            #expect(ahead.head.status == 400)
        }

        @Test
        func aDeletedSessionEndsItsStreamWithAFinalEventSayingNotToComeBack() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            let stream = try Self.stream(server, session)
            #expect(try stream.nextEvent()?.event == "open")
            #expect(try connection.request("DELETE", "/session", headers: [("X-Session-Id", session)]).status == 204)
            let end = try #require(try stream.nextEvent())
            #expect(end.event == "end", "\(end)")
            #expect(try end.json()["reason"]?.stringValue == "session_ended" && end.json()["retry"] == .bool(false))
            #expect(try stream.next() == nil, "the body ends after it")
            #expect(
                eventually {
                    LiveMetrics((try? connection.request("GET", "/metrics").text) ?? "")["menu_streams_open"] == 0
                })
            // An unknown session never opens a stream.
            let unknown = try Self.stream(server, session)
            #expect(unknown.head.status == 404)
        }

        @Test
        func heartbeatsKeepTheStreamTalkingAndFindAClientThatLeft() throws {
            let server = try LiveServer { $0.streamHeartbeatSeconds = 1 }
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            do {
                let stream = try Self.stream(server, session)
                #expect(try stream.nextEvent()?.event == "open")
                #expect(try stream.next()?.isComment == true, "a heartbeat with nothing else to say")
                #expect(try stream.next()?.isComment == true)
            }  // the client leaves; the next heartbeats find it gone
            #expect(
                eventually {
                    LiveMetrics((try? connection.request("GET", "/metrics").text) ?? "")["menu_streams_open"] == 0
                })
        }

        @Test
        func pastMaxStreamsTheNextStreamIsRefusedWith503AndStreamsAndLongPollsShareTheLimit() throws {
            let server = try LiveServer { $0.maxStreams = 1 }
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            let stream = try Self.stream(server, session)
            #expect(try stream.nextEvent()?.event == "open")
            let refused = try Self.stream(server, session)
            #expect(refused.head.status == 503 && refused.head.header("Retry-After") == "5")
            #expect(String(decoding: refused.head.body, as: UTF8.self).contains("too_many_streams"))
            let poll = try connection.request("GET", "/changes?since=0&wait=30", headers: [("X-Session-Id", session)])
            #expect(poll.status == 503, "a long poll counts against the same limit")
            #expect(LiveMetrics(try connection.request("GET", "/metrics").text)["menu_streams_refused_total"] == 2)
        }

        @Test
        func pastThePerAddressLimitTheNextStreamIsRefusedWith429() throws {
            let server = try LiveServer { $0.perIPConnections = 2 }
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            // libmicrohttpd counts a taken-over stream's connection against the address until its
            // thread has cleaned it up, and closes a connection past the limit unread: open again.
            func admitted() throws -> LiveEventStream {
                for _ in 0 ..< 100 {
                    if let stream = try? Self.stream(server, session) { return stream }
                    usleep(50_000)
                }
                return try Self.stream(server, session)
            }
            let streams = try (0 ..< 2).map { _ in try admitted() }
            for stream in streams { #expect(try stream.nextEvent()?.event == "open") }
            // The streams no longer hold libmicrohttpd connections, so the limit is kept per stream.
            let refused = try admitted()
            #expect(refused.head.status == 429)
            let body = try JSONDecoder().decode(LiveJSON.self, from: Data(refused.head.body))
            #expect(body["error"]?["code"]?.stringValue == "too_many_streams_from_address")
            #expect(
                body["error"]?["message"]?.stringValue
                    == "this address holds its limit of 2 event streams (--per-ip-connections); close one, or GET /changes?wait= instead"
            )
            #expect(try Self.feed(since: 0, session, on: connection)["revision"] == .number(0), "other requests go on")
        }

        @Test
        func aServerThatStopsEndsItsStreamsWithARetryHint() throws {
            let server = try LiveServer()
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            let stream = try Self.stream(server, session)
            #expect(try stream.nextEvent()?.event == "open")
            server.shutdown()
            let end = try #require(try stream.nextEvent())
            #expect(end.event == "end")
            #expect(try end.json()["reason"]?.stringValue == "server_stopping" && end.json()["retry"] == .bool(true))
            #expect(try stream.next() == nil)
        }

        @Test
        func aReloadEntryOver16KiBIsAReloadEventOnTheStreamAndWholeInTheList() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "menu-sse-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = directory.appendingPathComponent("menu.json")
            // One open group of 4,000 dishes; the next menu renames every one: 4,000 reconfigured rows.
            func menu(_ suffix: String) -> Data {
                let dishes = (0 ..< 4_000).map { #"{"id":"d\#($0)","title":"Dish \#($0)\#(suffix)"}"# }
                return Data(
                    #"{"items":[{"id":"all","title":"All","expanded":true,"items":[\#(dishes.joined(separator: ","))]}]}"#
                        .utf8)
            }
            try menu("").write(to: config)
            let server = try LiveServer { $0.configPath = config.path }
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            let followed = try Self.stream(server, session)
            #expect(try followed.nextEvent()?.event == "open")
            try menu(" (new)").write(to: config)
            _ = try server.server.reload()
            let event = try #require(try followed.nextEvent())
            #expect(event.event == "reload", "too large to wait in the stream's buffer: \(event.event)")
            #expect(event.id == "1")
            let list = try connection.request("GET", "/changes?since=0", headers: [("X-Session-Id", session)])
            #expect(list.body.count > ChangeStream.bodyLimit / 2)
            let feed = try list.decode(LiveChanges.self)
            #expect(feed.changes.first?.reload?.reconfigured == Array(1 ... 4_000))
        }

        @Test
        func aMenuReloadReachesASessionsStreamAndLongPollAsAnEntryAndADefaultViewStreamAsReload() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "menu-sse-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = directory.appendingPathComponent("menu.json")
            try Data(contentsOf: URL(fileURLWithPath: LivePaths.menuConfig)).write(to: config)
            let server = try LiveServer { $0.configPath = config.path }
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try Self.newSession(connection)
            try Self.toggle("drinks", session, on: connection)
            let plain = try LiveEventStream(port: server.port, "/changes?since=0")
            let followed = try LiveEventStream(
                port: server.port, "/changes?since=1", headers: [("X-Session-Id", session)])
            let before = try #require(try plain.nextEvent())
            #expect(try before.json()["action"]?.stringValue == "none")
            #expect(try followed.nextEvent()?.event == "open")
            let polling = try server.connect()
            try polling.sendRequest("GET", "/changes?since=1&wait=30", headers: [("X-Session-Id", session)])
            // A new menu: a dish renamed.
            let text = try String(contentsOf: config, encoding: .utf8)
            #expect(text.contains("\"Kung Pao Chicken\""))
            try text.replacingOccurrences(of: "\"Kung Pao Chicken\"", with: "\"Kung Pao Chicken (new)\"").write(
                to: config, atomically: true, encoding: .utf8)
            _ = try server.server.reload()
            let reload = try #require(try plain.nextEvent())
            #expect(reload.event == "reload", "\(reload)")
            let newVersion = try reload.json()["version"]
            #expect(try newVersion != before.json()["version"], "the new menu's version")
            // The session's stream: one change event, the reload entry, at the next revision.
            let entry = try #require(try followed.nextEvent())
            #expect(entry.event == "change", "\(entry)")
            #expect(entry.id == "2")
            let carried = try entry.json()
            #expect(carried["revision"] == .number(2))
            #expect(carried["reload"]?["version"] == newVersion)
            #expect(carried["reload"]?["reconfigured"] != nil && carried["reload"]?["changes"] == .array([]))
            // The long poll: answered with the same entry.
            let answer = try polling.readResponse()
            #expect(answer.status == 200)
            let polled = try answer.decode(LiveChanges.self)
            #expect(polled.revision == 2 && polled.changes.map(\.revision) == [2])
            #expect(polled.changes.first?.reload?.version == newVersion?.stringValue)
            #expect(polled.changes.first?.reload?.reconfigured.count == 1, "the renamed dish")
        }
    }
}
