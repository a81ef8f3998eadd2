// Portable sessions (issue 13 §6), over both transports: GET /session answers the expansion, by
// id, of the session X-Session-Id names, and POST /sessions with it makes a session showing the same table, on the same menu, on a
// reloaded one, and on a new server (a memory-only restart).

import DurableTestSupport
import Foundation
import MenuApp
import MenuAppTestSupport
import MenuServiceTestSupport
import MenuTestSupport
import Testing

/// A portable expansion as the contract writes it.
struct LivePortableExpansion: Codable, Equatable, Sendable {
    struct Mark: Codable, Equatable, Sendable {
        var id: String
        var mode: String
    }

    var base = "default"
    var marks: [Mark] = []
    var expanded: [String] = []
    var collapsed: [String] = []

    /// The expansion as a `POST /sessions` body.
    var body: [UInt8] { Array(try! JSONEncoder().encode(self)) }
}

/// The answer of `GET /session`.
struct LiveSessionExpansion: Decodable, Sendable {
    var version: String
    var sessionId: String
    var revision: Int
    var expansion: LivePortableExpansion
    var selection: LivePortableSelection
}

/// A portable selection as the contract writes it.
struct LivePortableSelection: Codable, Equatable, Sendable {
    var all = false
    var toggled: [String] = []
}

/// The answer of `POST /sessions`.
struct LiveCreatedSession: Decodable, Sendable {
    var sessionId: String
    var revision: Int
    var ignored: [String]
}

extension ContractClient {
    /// `GET /session` with `X-Session-Id: session`, checked to be a 200 session read of `session`.
    func portable(of session: String, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> LiveSessionExpansion
    {
        let response = try await get("/session", session: session)
        #expect(response.status == 200, "\(response)", sourceLocation: sourceLocation)
        liveExpectJSONHeaders(response, sourceLocation: sourceLocation)
        #expect(
            try response.keys() == ["version", "sessionId", "revision", "expansion", "selection"],
            sourceLocation: sourceLocation)
        let answer = try response.decode(LiveSessionExpansion.self, sourceLocation: sourceLocation)
        #expect(answer.sessionId == session, sourceLocation: sourceLocation)
        return answer
    }

    /// `POST /sessions` with `expansion` as its body, checked to be a 201 at revision 0.
    func create(from expansion: LivePortableExpansion, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> LiveCreatedSession
    {
        let response = try await send("POST", "/sessions", body: expansion.body)
        #expect(response.status == 201, "\(response)", sourceLocation: sourceLocation)
        liveExpectJSONHeaders(response, sourceLocation: sourceLocation)
        let created = try response.decode(LiveCreatedSession.self, sourceLocation: sourceLocation)
        #expect(
            created.revision == 0 && response.header("X-Session-Id") == created.sessionId,
            sourceLocation: sourceLocation)
        return created
    }

    /// The session's whole table: every row, the counts and the version (not the revision).
    func table(of session: String?, sourceLocation: SourceLocation = #_sourceLocation) async throws -> LiveJSON {
        let response = try await get("/rows?limit=500", session: session)
        #expect(response.status == 200, "\(response)", sourceLocation: sourceLocation)
        let page = try response.json(sourceLocation: sourceLocation)
        return .object([
            "version": page["version"] ?? .null, "count": page["count"] ?? .null,
            "leafCount": page["leafCount"] ?? .null, "rows": page["rows"] ?? .null
        ])
    }
}

extension AppTests {
    @Suite("Contract: portable sessions, in-process and over real HTTP")
    struct ContractPortableSessionTests {
        let model = LiveMenuModel.menu

        /// A session changed by sets and a reveal: beer, baijiu and drinks collapsed, a reveal of
        /// wuliangye (opening drinks and baijiu again), main-courses collapsed.
        func changedSession(_ client: any ContractClient) async throws -> String {
            let session = try await client.newSession()
            for group in ["beer", "baijiu", "drinks"] {
                #expect(try await client.setExpansion(group, false, session: session).status == 200)
            }
            #expect(try await client.send("POST", "/nodes/wuliangye/reveal", session: session).status == 200)
            #expect(try await client.setExpansion("main-courses", false, session: session).status == 200)
            return session
        }

        @Test(arguments: ContractTransport.allCases)
        func theExpansionAfterSetsAndARevealIsTheChangedGroupsByIDAndRecreatesTheSameTable(
            over transport: ContractTransport
        ) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await changedSession(client)
            let answer = try await client.portable(of: session)
            #expect(answer.revision == 5)
            #expect(answer.expansion == LivePortableExpansion(collapsed: ["main-courses", "beer"]))  // menu order

            let created = try await client.create(from: answer.expansion)
            #expect(created.ignored.isEmpty)
            #expect(created.sessionId != session)
            let table = try await client.table(of: session)
            #expect(try await client.table(of: created.sessionId) == table)
            #expect(try await client.table(of: nil) != table)
            let copy = try await client.portable(of: created.sessionId)
            #expect(copy.revision == 0 && copy.expansion == answer.expansion && copy.version == answer.version)
        }

        @Test(arguments: ContractTransport.allCases)
        func theReadIsTaggedByVersionAndRevisionAndAnswers304UntilTheSessionChanges(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            let first = try await client.get("/session", session: session)
            let tag = try #require(first.header("ETag"))
            #expect(first.header("Cache-Control") == "private, no-cache")
            #expect(tag == (try await client.get("/count", session: session)).header("ETag"))  // the same state, the same tag
            let unchanged = try await client.send(
                "GET", "/session", session: session, headers: [("If-None-Match", tag)])
            #expect(unchanged.status == 304 && unchanged.body.isEmpty && unchanged.header("ETag") == tag)
            let head = try await client.send("HEAD", "/session", session: session)
            #expect(
                head.status == 200 && head.header("ETag") == tag
                    && head.header("Content-Length") == String(first.body.count))
            _ = try await client.toggle("drinks", session: session)
            let changed = try await client.send("GET", "/session", session: session, headers: [("If-None-Match", tag)])
            #expect(changed.status == 200 && changed.header("ETag") != tag)
            #expect(
                try changed.decode(LiveSessionExpansion.self).expansion == LivePortableExpansion(collapsed: ["drinks"]))
        }

        @Test(arguments: ContractTransport.allCases)
        func aHeaderIDThatIsNoSessionIDIsInvalidAndAnUnknownOneIs404(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            try liveExpectError(try await client.get("/session", session: "abc"), status: 400, code: "invalid_session")
            try liveExpectError(
                try await client.get("/session", session: "AAAAAAAAAAAAAAAAAAAAAA"), status: 404,
                code: "unknown_session")
            let session = try await client.newSession()
            #expect(try await client.send("DELETE", "/session", session: session).status == 204)
            try liveExpectError(
                try await client.get("/session", session: session), status: 404, code: "unknown_session")
            let refused = try await client.send("PUT", "/session", session: session)
            try liveExpectError(refused, status: 405, code: "method_not_allowed")
            #expect(refused.header("Allow") == "GET, HEAD, DELETE")
        }

        /// The old form with the id in the path is not served, whatever the method: a client of it
        /// gets 404 `moved` naming the new route, the id is not echoed, and the session is untouched
        /// (the id went through a URL once, so no answer may reward it).
        @Test(arguments: ContractTransport.allCases)
        func theOldPathFormIs404MovedNamingTheHeaderRouteWithoutEchoingTheID(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            _ = try await client.toggle("drinks", session: session)
            for method in ["GET", "DELETE", "PUT", "POST"] {
                for target in [
                    "/sessions/\(session)", "/sessions/\(session)?lang=en", "/sessions/abc", "/sessions/\(session)/x"
                ] {
                    let response = try await client.send(method, target, session: session)
                    try liveExpectError(response, status: 404, code: "moved")
                    #expect(
                        response.text.contains("GET, HEAD or DELETE /session")
                            && response.text.contains("X-Session-Id"), "\(response)")
                    #expect(!response.text.contains(session) && !response.text.contains("abc"), "\(response)")
                    #expect(response.header("Allow") == nil && response.header("X-Session-Id") == nil)
                }
            }
            #expect(try await client.send("HEAD", "/sessions/\(session)").status == 404)
            #expect(
                try await client.portable(of: session).expansion == LivePortableExpansion(collapsed: ["drinks"]),
                "not deleted")
        }

        /// The test's own reading of a portable expansion on its menu: base, then marks (outermost
        /// first: the model's nodes are in menu order, so a later mark inside an earlier one wins),
        /// then flips.
        func state(of expansion: LivePortableExpansion) -> LiveMenuModel.State {
            var state = model.defaultState
            func subtree(_ node: Int) -> [Int] { [node] + (model.nodes[node].children ?? []).flatMap(subtree) }
            for node in model.nodes.indices where model.nodes[node].children != nil && expansion.base != "default" {
                state.expanded[node] = expansion.base == "expanded"
            }
            for node in model.nodes.indices {
                guard let mark = expansion.marks.first(where: { $0.id == model.nodes[node].id }) else { continue }
                for inner in subtree(node) where model.nodes[inner].children != nil {
                    state.expanded[inner] = mark.mode == "expanded"
                }
            }
            for id in expansion.expanded { state.expanded[model.node(id)!] = true }
            for id in expansion.collapsed { state.expanded[model.node(id)!] = false }
            return state
        }

        @Test(arguments: ContractTransport.allCases)
        func aStateWithABaseAndMarksShowsTheRowsItDescribesAndReadsBackInMenuOrder(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let given = LivePortableExpansion(
                base: "collapsed", marks: [.init(id: "beer", mode: "collapsed"), .init(id: "drinks", mode: "expanded")],
                expanded: ["beer", "main-courses"], collapsed: ["soft-drinks"])
            let created = try await client.create(from: given)
            #expect(created.ignored.isEmpty)
            let rows = try await client.get("/rows?limit=500", session: created.sessionId).decode(LiveRowsPage.self)
                .rows
            #expect(rows == model.rows(state(of: given)))
            let read = try await client.portable(of: created.sessionId).expansion
            // Menu order: main-courses, drinks, beer, soft-drinks.
            #expect(
                read
                    == LivePortableExpansion(
                        base: "collapsed",
                        marks: [.init(id: "drinks", mode: "expanded"), .init(id: "beer", mode: "collapsed")],
                        expanded: ["main-courses", "beer"], collapsed: ["soft-drinks"]))
            #expect(
                try await client.table(of: client.create(from: read).sessionId) == client.table(of: created.sessionId))
        }

        @Test(arguments: ContractTransport.allCases)
        func collapseAllAndRecursiveSetsReadBackAsBaseAndMarksAndRecreateTheSameTable(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            #expect(
                try await client.send("PUT", "/expansion", session: session, body: Array(#"{"all":"collapsed"}"#.utf8))
                    .status == 200)
            #expect(
                try await client.send(
                    "PUT", "/groups/drinks/expansion", session: session,
                    body: Array(#"{"isExpanded":true,"recursive":true}"#.utf8)
                ).status == 200)
            #expect(try await client.toggle("baijiu", session: session).status == 200)
            #expect(try await client.send("POST", "/nodes/mapo-tofu/reveal", session: session).status == 200)
            let read = try await client.portable(of: session)
            #expect(read.revision == 4)
            #expect(
                read.expansion
                    == LivePortableExpansion(
                        base: "collapsed", marks: [.init(id: "drinks", mode: "expanded")],
                        expanded: ["main-courses"], collapsed: ["baijiu"]))
            let copy = try await client.create(from: read.expansion)
            #expect(try await client.table(of: copy.sessionId) == client.table(of: session))
            #expect(
                try await client.get("/rows?limit=500", session: session).decode(LiveRowsPage.self).rows
                    == model.rows(state(of: read.expansion)))
        }

        @Test(arguments: ContractTransport.allCases)
        func idsThatNameNoGroupAreIgnoredAndListedAndAFlipToTheDefaultIsDropped(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let given = LivePortableExpansion(
                marks: [.init(id: "desserts", mode: "collapsed"), .init(id: "snow-beer", mode: "expanded")],
                expanded: ["drinks", "no-such-group"], collapsed: ["mapo-tofu", "beer"])
            let created = try await client.create(from: given)
            #expect(created.ignored == ["desserts", "snow-beer", "no-such-group", "mapo-tofu"])
            // drinks is expanded by default: that flip changes nothing and is gone.
            #expect(
                try await client.portable(of: created.sessionId).expansion == LivePortableExpansion(collapsed: ["beer"])
            )
            #expect(
                try await client.table(of: created.sessionId)
                    == client.table(of: client.create(from: LivePortableExpansion(collapsed: ["beer"])).sessionId))
            // No body, or an empty one: the default state, nothing ignored.
            let plain = try await client.send("POST", "/sessions", body: [])
            #expect(plain.status == 201)
            #expect(try plain.decode(LiveCreatedSession.self).ignored.isEmpty)
        }

        @Test(arguments: ContractTransport.allCases)
        func twoSessionsCreatedFromOneStateShowTheSameTableAndThenChangeApart(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let shared = try await client.portable(of: try await changedSession(client)).expansion
            let (phone, laptop) = (
                try await client.create(from: shared).sessionId, try await client.create(from: shared).sessionId
            )
            #expect(try await client.table(of: phone) == client.table(of: laptop))
            _ = try await client.toggle("breakfast", session: phone)
            #expect(try await client.table(of: phone) != client.table(of: laptop))
            #expect(try await client.portable(of: laptop).expansion == shared)
        }

        @Test(arguments: ContractTransport.allCases)
        func aMemoryOnlyServerRestartedAcceptsTheKeptStateAndShowsTheSameTable(over transport: ContractTransport)
            async throws
        {
            let first = try transport.start()
            let before = first.client()
            let session = try await changedSession(before)
            let kept = try await before.portable(of: session)
            let table = try await before.table(of: session)
            first.shutdown()

            let second = try transport.start()
            defer { second.shutdown() }
            let client = second.client()
            try liveExpectError(try await client.get("/rows", session: session), status: 404, code: "unknown_session")
            let recovered = try await client.create(from: kept.expansion)
            #expect(recovered.ignored.isEmpty)
            #expect(try await client.table(of: recovered.sessionId) == table)
        }

        @Test(arguments: ContractTransport.allCases)
        func aStateKeptBeforeAReloadRestoresByIDOnTheNewMenu(over transport: ContractTransport) async throws {
            let reloadable = try ContractReloadableServer(over: transport)
            defer { reloadable.shutdown() }
            let client = reloadable.server.client()
            // Generation 1: seasonal and drinks are groups, mains is expanded by default.
            let session = try await client.newSession()
            for (group, isExpanded) in [
                ("seasonal", true), ("drinks", true), ("mains", false), ("desserts", false), ("sides", true)
            ] {
                #expect(try await client.setExpansion(group, isExpanded, session: session).status == 200)
            }
            let kept = try await client.portable(of: session)
            #expect(
                kept.expansion
                    == LivePortableExpansion(
                        expanded: ["seasonal", "drinks", "sides"], collapsed: ["mains", "desserts"]))

            // Generation 2: no seasonal; mains collapsed by default (the kept choice is the default now).
            #expect(try reloadable.reload(to: 2))
            let onTwo = try await client.create(from: kept.expansion)
            #expect(onTwo.ignored == ["seasonal"])
            #expect(try await client.table(of: onTwo.sessionId) == client.table(of: session))  // as the reload carried the session
            #expect(
                try await client.portable(of: onTwo.sessionId).expansion
                    == LivePortableExpansion(expanded: ["drinks", "sides"], collapsed: ["desserts"]))

            // Generation 3: drinks is a row.
            #expect(try reloadable.reload(to: 3))
            let onThree = try await client.create(from: kept.expansion)
            #expect(onThree.ignored == ["drinks"])
            #expect(
                try await client.portable(of: onThree.sessionId).expansion
                    == LivePortableExpansion(expanded: ["seasonal", "sides"], collapsed: ["mains", "desserts"]))
        }

        @Test(arguments: ContractTransport.allCases)
        func theDurableStoreKeepsSessionsCreatedFromAStateAcrossARestart(over transport: ContractTransport) async throws
        {
            let directory = DurableTemporaryDirectory()
            defer { directory.remove() }
            let first = try transport.start { $0.dataDirectory = directory.path }
            let states = [
                LivePortableExpansion(collapsed: ["main-courses", "beer"]),
                LivePortableExpansion(
                    base: "collapsed", marks: [.init(id: "drinks", mode: "expanded")],
                    expanded: ["main-courses"], collapsed: ["beer"])
            ]
            var kept: [(session: String, state: LivePortableExpansion, table: LiveJSON)] = []
            for state in states {
                let created = try await first.client().create(from: state)
                kept.append((created.sessionId, state, try await first.client().table(of: created.sessionId)))
            }
            first.shutdown()

            let second = try transport.start { $0.dataDirectory = directory.path }
            defer { second.shutdown() }
            let client = second.client()
            for (session, state, table) in kept {
                let read = try await client.portable(of: session)
                #expect(read.expansion == state && read.revision == 0)
                #expect(try await client.table(of: session) == table)
            }
        }
    }
}
