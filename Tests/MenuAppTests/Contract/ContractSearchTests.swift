// GET /search and the filtered tree of GET /rows and /count (q, filter), over both transports,
// on the tests' search fixture (Tests/Fixtures/search-menu.json: accented titles, CJK titles, a
// searchable "en" attribute, boolean and number attributes).

import Foundation
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import Testing

extension AppTests {
    @Suite("Contract: search and the filtered tree, in-process and over real HTTP")
    struct ContractSearchTests {
        static let fixture = LivePaths.packageRoot.appendingPathComponent("Tests/Fixtures/search-menu.json").path

        struct Results: Decodable, Sendable {
            struct Step: Decodable, Sendable, Equatable {
                var id: String
                var title: String
            }
            struct Match: Decodable, Sendable {
                var id: String
                var title: String
                var isGroup: Bool
                var index: Int?
                var path: [Step]
            }
            var version: String
            var revision: Int
            var query: String?
            var total: Int
            var offset: Int
            var limit: Int
            var matches: [Match]
        }

        struct FilteredPage: Decodable, Sendable {
            var revision: Int
            var count: Int
            var leafCount: Int
            var query: String?
            var filtered: Bool
            var offset: Int
            var rows: [LiveRow]
        }

        func start(_ transport: ContractTransport) throws -> ContractServer {
            try transport.start { $0.configPath = Self.fixture }
        }

        func search(_ client: any ContractClient, _ query: String, session: String? = nil) async throws -> Results {
            let response = try await client.get("/search?" + query, session: session)
            #expect(response.status == 200, "\(response)")
            liveExpectJSONHeaders(response)
            #expect(response.header("ETag") == nil)
            return try response.decode(Results.self)
        }

        @Test(arguments: ContractTransport.allCases)
        func cafeFindsCafeAndEveryMatchSaysWhereItIs(over transport: ContractTransport) async throws {
            let server = try start(transport)
            defer { server.shutdown() }
            let client = server.client()
            let cafe = try await search(client, "q=cafe")
            #expect(cafe.total == 1 && cafe.query == "cafe" && cafe.revision == 0)
            let match = try #require(cafe.matches.first)
            #expect((match.id, match.title, match.isGroup) == ("cafe-creme", "Café crème", false))
            #expect(match.path == [.init(id: "drinks", title: "Drinks"), .init(id: "coffee", title: "Coffee")])
            #expect(match.index == nil)  // drinks is collapsed by default
            #expect(try await search(client, "q=CR%C3%88ME").matches.map(\.id) == ["cafe-creme", "creme-brulee"])
            // The searchable "en" attribute is searched; the unlisted "origin" is not.
            #expect(try await search(client, "q=tofu").matches.map(\.id) == ["mapo", "tofu"])
            #expect(try await search(client, "q=plzen").total == 0)
            let tofu = try await search(client, "q=%E8%B1%86%E8%85%90")  // 豆腐
            #expect(tofu.matches.map(\.id) == ["mapo", "tofu"])
            #expect(tofu.matches.map(\.index) == [2, 3])  // drinks (collapsed), food, mapo, tofu
            let paged = try await search(client, "q=e&offset=1&limit=2")
            #expect(paged.total > 3 && paged.offset == 1 && paged.limit == 2 && paged.matches.count == 2)
        }

        @Test(arguments: ContractTransport.allCases)
        func revealAfterSearchShowsTheMatchInTheUsersTree(over transport: ContractTransport) async throws {
            let server = try start(transport)
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            #expect(try await search(client, "q=k%C3%B6lsch", session: session).matches.first?.index == nil)
            #expect(try await client.send("POST", "/nodes/kolsch/reveal", session: session).status == 200)
            let found = try await search(client, "q=kolsch", session: session)
            let index = try #require(found.matches.first?.index)
            let page = try await client.get("/rows?offset=\(index)&limit=1", session: session).decode(LiveRowsPage.self)
            #expect(page.rows.map(\.id) == ["kolsch"])
            #expect(found.revision == page.revision)
        }

        @Test(arguments: ContractTransport.allCases)
        func theFilteredTreeShowsMatchesAndAncestorsAndLeavesTheSessionsTreeAsItWas(over transport: ContractTransport)
            async throws
        {
            let server = try start(transport)
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            #expect(try await client.toggle("beer", session: session).status == 200)
            let before = try await client.get("/rows", session: session)
            let filtered = try await client.get("/rows?q=creme", session: session)
            #expect(filtered.status == 200, "\(filtered)")
            liveExpectJSONHeaders(filtered)
            let page = try filtered.decode(FilteredPage.self)
            #expect(page.filtered && page.query == "creme" && (page.count, page.leafCount) == (5, 2))
            #expect(page.rows.map(\.id) == ["drinks", "coffee", "cafe-creme", "food", "creme-brulee"])
            #expect(page.rows.map(\.index) == Array(0 ..< 5))
            #expect(page.rows.map(\.isExpanded) == [true, true, nil, true, nil])
            #expect(page.rows.map(\.visibleDescendantCount) == [2, 1, nil, 1, nil])
            // Placed among the rows shown: drinks and food are the two top-level rows shown; each
            // shows one child.
            #expect(page.rows.map(\.level) == [1, 2, 3, 1, 2])
            #expect(page.rows.map(\.posInSet) == [1, 1, 1, 2, 1])
            #expect(page.rows.map(\.setSize) == [2, 1, 1, 2, 1])
            let second = try await client.get("/rows?q=creme&offset=3&limit=1", session: session).decode(
                FilteredPage.self)
            #expect(second.rows.map(\.id) == ["food"] && second.offset == 3)
            let count = try await client.get("/count?q=creme", session: session)
            #expect(try count.decode(FilteredPage.Counts.self) == .init(count: 5, leafCount: 2, filtered: true))
            // Clearing the query: the user's own tree, byte for byte, at the same revision.
            let after = try await client.get("/rows", session: session)
            #expect(after.body == before.body && after.header("ETag") == before.header("ETag"))
            #expect(try after.decode(LiveRowsPage.self).revision == page.revision)
        }

        @Test(arguments: ContractTransport.allCases)
        func filtersCompareByTypeAndCombineWithTheText(over transport: ContractTransport) async throws {
            let server = try start(transport)
            defer { server.shutdown() }
            let client = server.client()
            #expect(
                try await search(client, "filter=vegan:true").matches.map(\.id) == [
                    "espresso", "lager", "kolsch", "tofu"
                ])
            #expect(try await search(client, "filter=vegan:true&filter=price:5.0").matches.map(\.id) == ["lager"])
            #expect(try await search(client, "filter=price:4.50").matches.map(\.id) == ["cafe-creme"])
            #expect(try await search(client, "q=o&filter=vegan:false").matches.map(\.id) == ["cafe-creme", "mapo"])
            #expect(try await search(client, "filter=en:Mapo%20Tofu").matches.map(\.id) == ["mapo"])
            #expect(try await search(client, "filter=vegan:true").query == nil)
            let rows = try await client.get("/rows?filter=vegan:true&filter=price:6").decode(FilteredPage.self)
            #expect(rows.rows.map(\.id) == ["drinks", "beer", "kolsch"] && rows.query == nil)
        }

        @Test(arguments: ContractTransport.allCases)
        func badQueriesAndFiltersAreRefusedNamingWhatIsWrong(over transport: ContractTransport) async throws {
            let server = try start(transport)
            defer { server.shutdown() }
            let client = server.client()
            let long = String(repeating: "a", count: 201)
            for target in [
                "/search?q=", "/search", "/search?q=a&q=b", "/search?q=\(long)", "/rows?q=", "/count?q=\(long)"
            ] {
                try liveExpectError(try await client.get(target), status: 400, code: "invalid_query")
            }
            for (target, named) in [
                ("/search?filter=vegan", "vegan"), ("/rows?q=a&filter=colour:red", "colour"), ("/count?filter=:x", ":x")
            ] {
                let response = try await client.get(target)
                try liveExpectError(response, status: 400, code: "invalid_filter")
                #expect(response.text.contains("\\\"\(named)\\\""), "\(response)")
            }
            #expect(try await client.get("/search?q=\(String(repeating: "a", count: 200))").status == 200)
        }

        @Test(arguments: ContractTransport.allCases)
        func aFilteredTagValidatesOnlyItsOwnQuery(over transport: ContractTransport) async throws {
            let server = try start(transport)
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            let plain = try #require(try await client.get("/rows", session: session).header("ETag"))
            let creme = try #require(try await client.get("/rows?q=creme", session: session).header("ETag"))
            #expect(plain != creme && creme.hasSuffix("-0\""))
            func status(_ target: String, _ tag: String) async throws -> Int {
                try await client.send("GET", target, session: session, headers: [("If-None-Match", tag)]).status
            }
            #expect(try await status("/rows?q=creme", creme) == 304)
            #expect(try await status("/rows?q=CR%C3%88ME", creme) == 304)  // the same folded query
            #expect(try await status("/count?q=creme", creme) == 304)
            #expect(try await status("/rows?q=cream", creme) == 200)
            #expect(try await status("/rows", creme) == 200)
            #expect(try await status("/rows?q=creme", plain) == 200)
            // A write takes the filtered tag as the session's revision (If-Match, strong comparison).
            let write = try await client.send(
                "POST", "/groups/beer/toggle", session: session, headers: [("If-Match", creme)])
            #expect(write.status == 200, "\(write)")
            #expect(try await status("/rows?q=creme", creme) == 200)  // the revision moved on
            let stale = try await client.send(
                "POST", "/groups/beer/toggle", session: session, headers: [("If-Match", creme)])
            #expect(stale.status == 412, "\(stale)")
        }
    }
}

extension AppTests.ContractSearchTests.FilteredPage {
    struct Counts: Decodable, Sendable, Equatable {
        var count: Int
        var leafCount: Int
        var filtered: Bool
    }
}
