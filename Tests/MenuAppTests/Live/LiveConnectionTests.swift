// Live tests over raw POSIX sockets: exact bytes on the wire, keep-alive, HEAD, and many
// concurrent clients each with its own session.

import Foundation
import MenuAppTestSupport
import MenuTestSupport
import NaiveReference
import Testing

extension AppTests {
    @Suite("Live: bytes, connections and concurrency")
    struct LiveConnectionTests {
        let model = LiveMenuModel.menu

        // MARK: Exact bytes

        @Test
        func utf8TitlesAreSentAsLiteralUTF8Bytes() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let response = try server.connect().request("GET", "/rows?limit=500")
            #expect(response.status == 200)
            liveExpectJSONHeaders(response)
            let kungPao = Array("\"title\":\"宮保雞丁\"".utf8)
            #expect(kungPao.count == 10 + 12)  // four CJK characters are three bytes each
            #expect(response.body.contains(kungPao))
            for title in ["主菜", "早餐", "酒水", "啤酒", "瀘州老窖特曲", "竹葉青茶"] {
                #expect(response.body.contains(Array("\"\(title)\"".utf8)), "\(title)")
            }
            #expect(!response.text.contains("\\u"), "no escaped characters expected")
        }

        @Test
        func attributeNumbersAndBooleansAreSentAsWrittenInTheConfig() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let text = try server.connect().request("GET", "/rows?limit=500").text
            // Members are matched one by one: JSON object member order carries no meaning.
            func hasMember(_ member: String) -> Bool { text.contains(member + ",") || text.contains(member + "}") }
            for member in [
                #""price":38"#, #""price":12.5"#, #""price":39.5"#, #""price":1280"#, #""volumeMl":500"#,
                #""spicy":0"#, #""alcoholic":true"#, #""alcoholic":false"#, #""vegetarian":true"#,
                #""vegetarian":false"#, #""currency":"CNY""#, #""en":"Main Courses""#
            ] {
                #expect(hasMember(member), "\(member)")
            }
            for wrong in ["38.0", "12.50", "1.25e1", "1280.0", #""true""#, #""38""#] {
                #expect(!text.contains(wrong), "\(wrong)")
            }
            let rows = try JSONDecoder().decode(LiveRowsPage.self, from: Data(text.utf8)).rows
            let kungPao = try #require(rows.first { $0.id == "kung-pao-chicken" })
            #expect(
                Set(kungPao.attributes?.keys.map { $0 } ?? []) == ["price", "currency", "spicy", "vegetarian", "en"])
        }

        @Test
        func healthzAndCountBodiesAreExactBytes() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let health = try connection.request("GET", "/healthz")
            #expect(health.body == Array(#"{"status":"ok"}"#.utf8))
            #expect(health.header("Content-Length") == "15")
            let count = try connection.request("GET", "/count")
            let version = try count.decode(LiveCount.self).version
            #expect(count.text == #"{"version":"\#(version)","revision":0,"count":30,"leafCount":24}"#)
            let rows = try connection.request("GET", "/rows?offset=16&limit=2")
            #expect(
                rows.text
                    == #"{"version":"\#(version)","revision":0,"count":30,"leafCount":24,"offset":16,"limit":2,"rows":[{"index":16,"level":1,"posInSet":3,"setSize":3,"id":"drinks","title":"酒水","depth":0,"parentId":null,"isGroup":true,"isExpanded":true,"childCount":3,"attributes":{"en":"Drinks"},"selection":"none","selectedCount":0,"selectableCount":10,"visibleDescendantCount":13},{"index":17,"level":2,"posInSet":1,"setSize":3,"id":"beer","title":"啤酒","depth":1,"parentId":"drinks","isGroup":true,"isExpanded":true,"childCount":3,"attributes":{"en":"Beer"},"selection":"none","selectedCount":0,"selectableCount":3,"visibleDescendantCount":3}]}"#
            )
            let leaf = try connection.request("GET", "/rows?offset=1&limit=1")
            #expect(
                leaf.text.hasPrefix(
                    #"{"version":"\#(version)","revision":0,"count":30,"leafCount":24,"offset":1,"limit":1,"rows":[{"index":1,"level":2,"posInSet":1,"setSize":9,"id":"kung-pao-chicken","title":"宮保雞丁","depth":1,"parentId":"main-courses","isGroup":false,"attributes":{"#
                ), "\(leaf.text)")
            #expect(leaf.text.hasSuffix("},\"selected\":false}]}"), "\(leaf.text)")
        }

        @Test
        func changeBodyIsExactBytes() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let created = try connection.request("POST", "/sessions")
            #expect(created.status == 201)
            let session = try #require(created.header("X-Session-Id"))
            #expect(created.text == #"{"sessionId":"\#(session)","revision":0,"ignored":[]}"#)
            let version = try connection.request("GET", "/count").decode(LiveCount.self).version
            let change = try connection.request(
                "POST", "/groups/main-courses/toggle", headers: [("X-Session-Id", session)])
            #expect(
                change.text
                    == #"{"version":"\#(version)","revision":1,"sessionId":"\#(session)","id":"main-courses","isExpanded":false,"index":0,"count":21,"leafCount":15,"change":{"at":1,"inserted":0,"removed":9}}"#
            )
            #expect(change.headerValues("X-Session-Id") == [session])
        }

        // MARK: Keep-alive

        @Test
        func keepAliveAnswersManyRequestsOnOneConnectionWithoutClosing() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let created = try connection.request("POST", "/sessions")
            let session = try #require(created.header("X-Session-Id"))
            let exchanges: [(method: String, target: String, body: String, status: Int)] = [
                ("GET", "/healthz", "", 200),
                ("GET", "/count", "", 200),
                ("GET", "/rows?limit=2", "", 200),
                ("POST", "/groups/drinks/toggle", "", 200),
                ("PUT", "/groups/drinks/expansion", #"{"isExpanded":true}"#, 200),
                ("GET", "/nope", "", 404),
                ("POST", "/rows", "", 405),
                ("GET", "/rows?limit=0", "", 400),
                ("POST", "/groups/mapo-tofu/toggle", "", 409),
                ("PUT", "/groups/beer/expansion", "{}", 400),
                ("GET", "/count", "", 200)
            ]
            var responses = [created]
            for exchange in exchanges {
                let response = try connection.request(
                    exchange.method, exchange.target, headers: [("X-Session-Id", session)],
                    body: Array(exchange.body.utf8))
                #expect(response.status == exchange.status, "\(exchange.method) \(exchange.target): \(response)")
                responses.append(response)
            }
            let deleted = try connection.request("DELETE", "/session", headers: [("X-Session-Id", session)])
            #expect(deleted.status == 204)
            responses.append(deleted)
            #expect(try connection.request("GET", "/healthz").status == 200)
            for response in responses {
                #expect(response.header("Connection")?.lowercased() != "close", "\(response.head)")
                #expect(response.head.hasPrefix("HTTP/1.1 "))
            }
            #expect(try connection.request("GET", "/count", headers: [("X-Session-Id", session)]).status == 404)
        }

        @Test
        func sessionHeaderNameIsCaseInsensitive() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try #require(try connection.request("POST", "/sessions").header("X-Session-Id"))
            let change = try connection.request("POST", "/groups/beer/toggle", headers: [("x-session-id", session)])
            #expect(try change.decode(LiveChange.self).sessionId == session)
            let count = try connection.request("GET", "/count", headers: [("X-SESSION-ID", session)])
            #expect(try count.decode(LiveCount.self).count == 27)
        }

        @Test
        func pipelinedRequestsAreAnsweredInOrderOnOneConnection() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let head = "Host: 127.0.0.1\r\n"
            try connection.send(
                Array(
                    ("GET /healthz HTTP/1.1\r\n\(head)\r\n"
                        + "GET /rows?offset=16&limit=1 HTTP/1.1\r\n\(head)\r\n"
                        + "GET /count HTTP/1.1\r\n\(head)\r\n").utf8))
            let first = try connection.readResponse()
            let second = try connection.readResponse()
            let third = try connection.readResponse()
            #expect(first.text == #"{"status":"ok"}"#)
            #expect(try second.decode(LiveRowsPage.self).rows.map(\.id) == ["drinks"])
            #expect(try third.decode(LiveCount.self).count == 30)
            for response in [first, second, third] {
                #expect(response.header("Connection")?.lowercased() != "close", "\(response.head)")
            }
        }

        @Test(arguments: ["/rows?limit=3", "/count", "/healthz"])
        func headSendsTheHeadersOfGetWithoutABody(target: String) throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let get = try connection.request("GET", target)
            let head = try connection.request("HEAD", target)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Type") == "application/json; charset=utf-8")
            for name in ["Cache-Control", "ETag", "Vary"] { #expect(head.header(name) == get.header(name), "\(name)") }
            #expect(head.header("Content-Length") == String(get.body.count))
            // No body bytes were left on the wire: the next answer parses.
            #expect(try connection.request("GET", "/healthz").text == #"{"status":"ok"}"#)
        }

        // MARK: Concurrency

        struct WorkerReport: Sendable {
            var requests = 0
            var acknowledged = 0
            var failures: [String] = []
            var serverErrors: [String] = []
        }

        /// Changes each client sends: a fixed amount of work, so a busy machine only takes longer.
        static let changesPerClient = 60

        /// One client: its own connection and session, `changesPerClient` random toggles and PUTs, each
        /// answer checked against the test's own model, then the final /count and /rows checked against
        /// the running sum of the acknowledged changes.
        static func runClient(port: Int, seed: UInt64, model: LiveMenuModel) -> WorkerReport {
            var report = WorkerReport()
            var random = SplitMix64(state: seed)
            func fail(_ message: String) { report.failures.append("seed \(seed): \(message)") }
            func check(_ response: LiveResponse, _ what: String) {
                report.requests += 1
                if response.status >= 500 { report.serverErrors.append("\(what): \(response)") }
            }
            do {
                let connection = try LiveRawConnection(port: port)
                let created = try connection.request("POST", "/sessions")
                check(created, "POST /sessions")
                guard created.status == 201, let session = created.header("X-Session-Id") else {
                    fail("POST /sessions: \(created)")
                    return report
                }
                let headers = [("X-Session-Id", session)]
                let groups = model.groupIDs
                var state = model.defaultState
                var count = 30
                var leafCount = 24
                for _ in 0 ..< changesPerClient {
                    let group = groups[Int(random.next() % UInt64(groups.count))]
                    let node = model.node(group)!
                    let usePut = random.next() % 2 == 0
                    // A PUT may repeat the current state (an empty change); a toggle always flips.
                    let target = usePut ? random.next() % 2 == 0 : !state.expanded[node]
                    let response =
                        usePut
                        ? try connection.request(
                            "PUT", "/groups/\(group)/expansion", headers: headers,
                            body: Array("{\"isExpanded\":\(target)}".utf8))
                        : try connection.request("POST", "/groups/\(group)/toggle", headers: headers)
                    let what = "\(usePut ? "PUT" : "POST") \(group) -> \(target)"
                    check(response, what)
                    guard response.status == 200,
                        let change = try? JSONDecoder().decode(LiveChange.self, from: Data(response.body))
                    else {
                        fail("\(what): \(response)")
                        break
                    }
                    report.acknowledged += 1
                    let expected = model.apply(group, expanded: target, to: &state)
                    if let splice = change.change {
                        count += splice.inserted - splice.removed
                    }
                    let counts = model.counts(state)
                    leafCount = counts.leafCount
                    if change.sessionId != session || change.id != group || change.isExpanded != target
                        || change.index != expected.index || change.change != expected.change
                        || change.count != counts.count || change.leafCount != counts.leafCount || change.count != count
                    {
                        fail(
                            "\(what): got \(response.text), expected index \(String(describing: expected.index)) change \(String(describing: expected.change)) count \(counts.count)/\(counts.leafCount), running sum \(count)"
                        )
                        break
                    }
                    if random.next() % 8 == 0 {
                        let offset = Int(random.next() % 32)
                        let limit = Int(random.next() % 10) + 1
                        let page = try connection.request(
                            "GET", "/rows?offset=\(offset)&limit=\(limit)", headers: headers)
                        check(page, "GET /rows")
                        let rows = try JSONDecoder().decode(LiveRowsPage.self, from: Data(page.body)).rows
                        let want = Array(model.rows(state).dropFirst(offset).prefix(limit))
                        if rows != want { fail("GET /rows?offset=\(offset)&limit=\(limit): \(page.text)") }
                    }
                }
                let final = try connection.request("GET", "/count", headers: headers)
                check(final, "GET /count")
                let finalCount = try JSONDecoder().decode(LiveCount.self, from: Data(final.body))
                if finalCount.count != count || finalCount.leafCount != leafCount {
                    fail("final /count \(final.text), computed \(count)/\(leafCount)")
                }
                let page = try connection.request("GET", "/rows?limit=500", headers: headers)
                check(page, "GET /rows")
                if try JSONDecoder().decode(LiveRowsPage.self, from: Data(page.body)).rows != model.rows(state) {
                    fail("final /rows \(page.text)")
                }
                let deleted = try connection.request("DELETE", "/session", headers: [("X-Session-Id", session)])
                check(deleted, "DELETE")
                if deleted.status != 204 { fail("DELETE: \(deleted)") }
            } catch {
                fail("\(error)")
            }
            return report
        }

        @Test
        func concurrentTogglesOfOneSessionAreAppliedOneAtATime() async throws {
            // Four connections toggle beer in the same session 50 times each. Every answer must be one
            // of the two states (never a torn mix), and after an even number of toggles beer is open again.
            let server = try LiveServer()
            defer { server.shutdown() }
            let port = server.port
            let session = try await server.client().newSession()
            let outcomes = LiveLocked<[String]>([])
            let done = DispatchGroup()
            for _ in 0 ..< 4 {
                done.enter()
                Thread {
                    var problems: [String] = []
                    do {
                        let connection = try LiveRawConnection(port: port)
                        for _ in 0 ..< 50 {
                            let response = try connection.request(
                                "POST", "/groups/beer/toggle", headers: [("X-Session-Id", session)])
                            guard response.status == 200,
                                let change = try? JSONDecoder().decode(LiveChange.self, from: Data(response.body))
                            else {
                                problems.append("\(response)")
                                continue
                            }
                            let closed =
                                change.isExpanded == false && change.count == 27 && change.leafCount == 21
                                && change.change == LiveSplice(at: 18, inserted: 0, removed: 3)
                            let opened =
                                change.isExpanded == true && change.count == 30 && change.leafCount == 24
                                && change.change == LiveSplice(at: 18, inserted: 3, removed: 0)
                            if !(closed || opened) || change.index != 17 { problems.append(response.text) }
                        }
                    } catch {
                        problems.append("\(error)")
                    }
                    outcomes.update { $0 += problems }
                    done.leave()
                }.start()
            }
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                done.notify(queue: .global()) { finished.resume() }
            }
            #expect(outcomes.value.isEmpty, "\(outcomes.value.prefix(5))")
            let count = try await server.client().get("/count", session: session).decode(LiveCount.self)
            #expect(count.count == 30)
            #expect(count.leafCount == 24)
        }

        @Test
        func eightConcurrentClientsEachSeeOnlyTheirOwnAcknowledgedChanges() async throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let model = self.model
            let port = server.port
            let baseSeed = UInt64.random(in: 1 ... UInt64.max / 2)
            let reports = LiveLocked<[WorkerReport]>([])
            let observed = LiveLocked<WorkerReport>(WorkerReport())
            let done = DispatchGroup()
            for worker in 0 ..< 8 {
                done.enter()
                Thread {
                    let report = Self.runClient(port: port, seed: baseSeed &+ UInt64(worker), model: model)
                    reports.update { $0.append(report) }
                    done.leave()
                }.start()
            }
            // A ninth client without a session reads the default count a fixed number of times meanwhile.
            done.enter()
            Thread {
                var report = WorkerReport()
                do {
                    let connection = try LiveRawConnection(port: port)
                    for _ in 0 ..< Self.changesPerClient * 2 {
                        let response = try connection.request("GET", "/count")
                        report.requests += 1
                        if response.status >= 500 { report.serverErrors.append("GET /count: \(response)") }
                        if response.status != 200 || !response.text.hasSuffix(#""count":30,"leafCount":24}"#) {
                            report.failures.append("default /count changed: \(response)")
                            break
                        }
                    }
                } catch {
                    report.failures.append("observer: \(error)")
                }
                observed.set(report)
                done.leave()
            }.start()
            // Wait without blocking a thread of Swift's cooperative pool (every client stops after its
            // fixed work or its 15 s socket timeout; the time limit bounds the rest).
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                done.notify(queue: .global()) { finished.resume() }
            }

            let all = reports.value + [observed.value]
            #expect(reports.value.count == 8)
            let failures = all.flatMap(\.failures)
            let serverErrors = all.flatMap(\.serverErrors)
            #expect(failures.isEmpty, "\(failures.prefix(10))")
            #expect(serverErrors.isEmpty, "\(serverErrors.prefix(10))")
            // Every client got every one of its changes acknowledged (a failure stops a client early).
            #expect(
                reports.value.map(\.acknowledged) == Array(repeating: Self.changesPerClient, count: 8),
                "seed \(baseSeed)")
            #expect(
                observed.value.requests == Self.changesPerClient * 2, "the observer stopped early, seed \(baseSeed)")
            print(
                "LiveConnectionTests: 8 clients, \(reports.value.map(\.acknowledged).reduce(0, +)) acknowledged changes, \(all.map(\.requests).reduce(0, +)) requests, seed \(baseSeed)"
            )
        }
    }
}
