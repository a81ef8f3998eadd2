// Concurrency stress against the real server: 16 client threads, each on one keep-alive raw
// connection, mixing reads, toggles and PUTs on four shared sessions and on a private session
// each, a fixed number of operations per client (never "as many as fit in a time window", so a
// busy machine changes how long it takes, not what is checked). Every operation is answered, no
// 5xx, no crash, and each session's final state equals a sequential replay of the operations the
// server acknowledged for it:
// - private sessions: every answer and the final table equal a local replay through MenuModel's
//   FlattenedView in the client's own order;
// - shared sessions: a group several clients toggle ends in its default state flipped once per
//   acknowledged toggle (order-independent), and the answers, in whatever order the server applied
//   them, alternate, so exactly ceil(n/2) of n say "flipped"; a group only one client PUTs ends in
//   that client's last acknowledged value; every page read meanwhile is a consistent snapshot.

import Foundation
import MenuApp
import MenuAppTestSupport
import MenuModel
import MenuService
import MenuSessions
import MenuTestSupport
import NaiveReference
import Testing

extension AppTests {
    @Suite("Stress: many keep-alive clients on shared and private sessions")
    struct StressTests {

        /// Groups every client of a shared session toggles (never PUTs).
        static let contested = ["main-courses", "breakfast", "drinks", "beer"]
        /// Groups one client of a shared session PUTs (nobody else writes them): role → group.
        static let owned = [0: "baijiu", 1: "soft-drinks"]
        /// Operations each of the 16 clients sends after creating its session (one request each).
        static let operationsPerClient = 150
        /// Rounds of the session churn client (four requests each).
        static let churnRounds = 40

        struct Acknowledged: Sendable {
            var shared: Int
            var group: String
            var isExpanded: Bool
        }

        struct ClientReport: Sendable {
            var requests = 0
            var toggles: [Acknowledged] = []
            /// Last acknowledged PUT of an owned group: (shared session, group) → value.
            var lastPut: [String: Bool] = [:]
            var failures: [String] = []
        }

        /// Field-by-field equality of a served row and a model row (attributes are checked elsewhere).
        static func same(_ served: LiveRow, _ model: FlattenedRow) -> Bool {
            served.index == model.index && served.id == model.id && served.title == model.title
                && served.depth == model.depth && served.isGroup == model.isGroup
                && served.isExpanded == model.isExpanded && served.childCount == model.childCount
        }

        static func sameTable(_ page: LiveRowsPage, _ view: FlattenedView) -> Bool {
            let rows = view.rows(offset: page.offset, limit: page.limit)
            return page.count == view.count && page.leafCount == view.leafCount && page.rows.count == rows.count
                && zip(page.rows, rows).allSatisfy { same($0, $1) }
        }

        /// A page read from a shared session must be a snapshot of *some* state: the visible groups'
        /// flags, applied to the default expansion, must give exactly this page and these counts.
        static func isConsistentSnapshot(_ page: LiveRowsPage, menu: Menu) -> Bool {
            var view = FlattenedView(menu: menu)
            for row in page.rows where row.isGroup {
                guard let expanded = row.isExpanded, (try? view.setExpanded(row.id, expanded)) != nil else {
                    return false
                }
            }
            return page.offset == 0 && sameTable(page, view)
        }

        /// One client: its own keep-alive connection and private session, `shared` sessions to share;
        /// `operationsPerClient` requests between its POST /sessions and its final GET and DELETE.
        static func runClient(port: Int, index: Int, shared: [String], menu: Menu) -> ClientReport {
            var report = ClientReport()
            var random = SplitMix64(state: 0x5EED_0000 &+ UInt64(index) &* 0x9E37_79B9)
            let sharedIndex = index % shared.count
            let sharedSession = shared[sharedIndex]
            let ownedGroup = owned[index / shared.count]
            let groups = menu.nodes.filter { menu.isGroup($0) }.map { menu.id(of: $0) }
            func fail(_ message: String) { report.failures.append("client \(index): \(message)") }
            do {
                let connection = try LiveRawConnection(port: port)
                func call(_ method: String, _ target: String, session: String?, body: [UInt8] = []) throws
                    -> LiveResponse
                {
                    let response = try connection.request(
                        method, target, headers: session.map { [("X-Session-Id", $0)] } ?? [], body: body)
                    report.requests += 1
                    if response.status >= 500 { fail("\(method) \(target): server error \(response)") }
                    if response.header("Connection")?.lowercased() == "close" {
                        fail("\(method) \(target): keep-alive lost")
                    }
                    return response
                }
                func decode<T: Decodable>(_ type: T.Type, _ response: LiveResponse, _ what: String) -> T? {
                    guard response.status == 200 || response.status == 201,
                        let value = try? JSONDecoder().decode(T.self, from: Data(response.body))
                    else {
                        fail("\(what): \(response)")
                        return nil
                    }
                    return value
                }
                guard
                    let created = decode(
                        LiveSessionBody.self, try call("POST", "/sessions", session: nil), "POST /sessions")
                else {
                    return report
                }
                let mine = created.sessionId
                var local = FlattenedView(menu: menu)

                for _ in 0 ..< operationsPerClient where report.failures.isEmpty {
                    let dice = random.next() % 100
                    switch dice {
                    case 0 ..< 35:  // toggle a contested group of the shared session
                        let group = contested[Int(random.next() % UInt64(contested.count))]
                        let response = try call("POST", "/groups/\(group)/toggle", session: sharedSession)
                        if let change = decode(LiveChange.self, response, "toggle \(group) shared") {
                            if change.sessionId != sharedSession || change.id != group {
                                fail("toggle \(group): \(response.text)")
                            }
                            report.toggles.append(
                                Acknowledged(shared: sharedIndex, group: group, isExpanded: change.isExpanded))
                        }
                    case 35 ..< 45 where ownedGroup != nil:  // PUT the owned group of the shared session (others: a count)
                        let group = ownedGroup!
                        let value = random.next() % 2 == 0
                        let response = try call(
                            "PUT", "/groups/\(group)/expansion", session: sharedSession,
                            body: Array(#"{"isExpanded":\#(value)}"#.utf8))
                        if let change = decode(LiveChange.self, response, "PUT \(group) shared") {
                            if change.isExpanded != value { fail("PUT \(group) \(value): \(response.text)") }
                            report.lastPut["\(sharedIndex)/\(group)"] = value
                        }
                    case 45 ..< 55:  // read the whole shared table: a consistent snapshot
                        let response = try call("GET", "/rows?limit=500", session: sharedSession)
                        if let page = decode(LiveRowsPage.self, response, "GET /rows shared"),
                            !isConsistentSnapshot(page, menu: menu)
                        {
                            fail("torn shared page: \(response.text)")
                        }
                    case 55 ..< 80:  // toggle or PUT a group of the private session, checked against the replay
                        let group = groups[Int(random.next() % UInt64(groups.count))]
                        let usePut = random.next() % 2 == 0
                        let value = random.next() % 2 == 0
                        let response =
                            usePut
                            ? try call(
                                "PUT", "/groups/\(group)/expansion", session: mine,
                                body: Array(#"{"isExpanded":\#(value)}"#.utf8))
                            : try call("POST", "/groups/\(group)/toggle", session: mine)
                        guard
                            let change = decode(
                                LiveChange.self, response, "\(usePut ? "PUT" : "toggle") \(group) private")
                        else { break }
                        let expected = usePut ? try local.setExpanded(group, value) : try local.toggle(group)
                        let splice = expected.change.map {
                            LiveSplice(at: $0.at, inserted: $0.inserted, removed: $0.removed)
                        }
                        if change.sessionId != mine || change.id != group || change.isExpanded != expected.isExpanded
                            || change.index != expected.index || change.change != splice
                            || change.count != local.count || change.leafCount != local.leafCount
                        {
                            fail(
                                "\(usePut ? "PUT" : "toggle") \(group): got \(response.text), replay says \(expected), count \(local.count)/\(local.leafCount)"
                            )
                        }
                    case 80 ..< 95:  // read a window of the private session
                        let offset = Int(random.next() % 32)
                        let limit = Int(random.next() % 12) + 1
                        let response = try call("GET", "/rows?offset=\(offset)&limit=\(limit)", session: mine)
                        if let page = decode(LiveRowsPage.self, response, "GET /rows private"), !sameTable(page, local)
                        {
                            fail("private page offset \(offset) limit \(limit): \(response.text)")
                        }
                    default:  // counts: the default expansion (no session) never moves; the private one is the replay's
                        let withSession = random.next() % 2 == 0
                        let response = try call("GET", "/count", session: withSession ? mine : nil)
                        if let count = decode(LiveCount.self, response, "GET /count") {
                            let wanted = withSession ? (local.count, local.leafCount) : (menu.defaultCount, 24)
                            if count.count != wanted.0 || count.leafCount != wanted.1 {
                                fail("GET /count: \(response.text), wanted \(wanted)")
                            }
                        }
                    }
                }
                // Final state of the private session: the replay, whole.
                if let page = decode(
                    LiveRowsPage.self, try call("GET", "/rows?limit=500", session: mine), "final private rows"),
                    !sameTable(page, local)
                {
                    fail("final private table differs from the replay")
                }
                if try call("DELETE", "/session", session: mine).status != 204 { fail("DELETE private session") }
            } catch {
                fail("\(error)")
            }
            return report
        }

        @Test
        func sixteenKeepAliveClientsOnSharedAndPrivateSessionsMatchASequentialReplay() async throws {
            let server = try LiveServer { $0.threads = 4 }
            defer { server.shutdown() }
            let port = server.port
            let menu = try Menu(contentsOfFile: LivePaths.menuConfig)
            let client = server.client()
            var shared: [String] = []
            for _ in 0 ..< 4 { shared.append(try await client.newSession()) }
            let sharedSessions = shared
            let started = Date()  // for the summary line only: nothing below depends on how long it took

            let reports = try await withThrowingTaskGroup(of: ClientReport.self) { group in
                for index in 0 ..< 16 {
                    group.addTask {
                        try await hostileOnThread {
                            Self.runClient(port: port, index: index, shared: sharedSessions, menu: menu)
                        }
                    }
                }
                // Meanwhile: sessions created, used and deleted; a deleted one is unknown at once.
                group.addTask {
                    try await hostileOnThread {
                        var report = ClientReport()
                        do {
                            let connection = try LiveRawConnection(port: port)
                            for _ in 0 ..< Self.churnRounds {
                                let created = try connection.request("POST", "/sessions")
                                report.requests += 1
                                guard created.status == 201, let id = created.header("X-Session-Id") else {
                                    report.failures.append("churn POST /sessions: \(created)")
                                    break
                                }
                                let toggled = try connection.request(
                                    "POST", "/groups/drinks/toggle", headers: [("X-Session-Id", id)])
                                let deleted = try connection.request(
                                    "DELETE", "/session", headers: [("X-Session-Id", id)])
                                let after = try connection.request("GET", "/count", headers: [("X-Session-Id", id)])
                                report.requests += 3
                                if toggled.status != 200 || deleted.status != 204 || after.status != 404 {
                                    report.failures.append("churn: \(toggled.status) \(deleted.status) \(after.status)")
                                    break
                                }
                            }
                        } catch {
                            report.failures.append("churn: \(error)")
                        }
                        return report
                    }
                }
                return try await group.reduce(into: [ClientReport]()) { $0.append($1) }
            }
            let elapsed = Date().timeIntervalSince(started)

            let failures = reports.flatMap(\.failures)
            #expect(failures.isEmpty, "\(failures.prefix(10))")
            // Every client did all its work: each operation was sent and answered (none lost, none
            // cut short by a closed connection or a failure).
            let requests = reports.map(\.requests).reduce(0, +)
            let expected = 16 * (Self.operationsPerClient + 3) + Self.churnRounds * 4
            #expect(requests == expected, "\(requests) of \(expected) requests answered")

            // Replay each shared session: contested groups by parity, owned groups by their last PUT.
            let toggles = reports.flatMap(\.toggles)
            var lastPut: [String: Bool] = [:]
            for report in reports { lastPut.merge(report.lastPut) { _, new in new } }
            let connection = try LiveRawConnection(port: port)
            for (sharedIndex, session) in sharedSessions.enumerated() {
                var view = FlattenedView(menu: menu)
                for group in Self.contested {
                    let node = try #require(menu.node(withID: group))
                    let initial = menu.isExpandedByDefault(node)
                    let answers = toggles.filter { $0.shared == sharedIndex && $0.group == group }.map(\.isExpanded)
                    let flipped = answers.filter { $0 != initial }.count
                    #expect(
                        flipped == (answers.count + 1) / 2 && answers.count - flipped == answers.count / 2,
                        "session \(sharedIndex) \(group): \(answers.count) toggles answered \(flipped) times flipped")
                    _ = try view.setExpanded(group, answers.count % 2 == 1 ? !initial : initial)
                }
                for (_, group) in Self.owned {
                    if let value = lastPut["\(sharedIndex)/\(group)"] { _ = try view.setExpanded(group, value) }
                }
                let response = try connection.request("GET", "/rows?limit=500", headers: [("X-Session-Id", session)])
                let page = try response.decode(LiveRowsPage.self)
                #expect(
                    Self.sameTable(page, view),
                    "shared session \(sharedIndex): \(response.text) differs from the replay")
                let count = try connection.request("GET", "/count", headers: [("X-Session-Id", session)]).decode(
                    LiveCount.self)
                #expect(count.count == view.count && count.leafCount == view.leafCount)
            }
            #expect(try connection.request("GET", "/healthz").status == 200)
            #expect(
                (server.server.service.store as? InMemorySessionStore)?.count == 4, "only the shared sessions are left")
            print(
                "StressTests: 16 clients + churn, \(requests) requests (\(toggles.count) shared toggles) in \(String(format: "%.1f", elapsed)) s"
            )
        }
    }
}
