// Pages of GET /rows found by a node (`after`, `before`, `around`), run over both transports and
// checked against the tests' own model (LiveMenuModel) for every node, under the default expansion
// and under a session with groups collapsed.

import Foundation
import MenuAppTestSupport
import MenuServiceTestSupport
import MenuTestSupport
import Testing

extension AppTests {
    @Suite("Contract: pages anchored to a node, in-process and over real HTTP")
    struct ContractAnchorTests {
        let model = LiveMenuModel.menu

        /// The page the contract defines for `anchor` at `index` in `rows`: its offset and its rows.
        static func expectedPage(_ anchor: String, index: Int, limit: Int, rows: [LiveRow]) -> (
            offset: Int, rows: [LiveRow]
        ) {
            let (offset, end): (Int, Int) =
                switch anchor {
                case "after": (index + 1, index + 1 + limit)
                case "before": (max(0, index - limit), index)
                default:
                    (
                        max(0, min(index - limit / 2, rows.count - limit)),
                        max(0, min(index - limit / 2, rows.count - limit)) + limit
                    )
                }
            return (offset, Array(rows[min(offset, rows.count) ..< min(end, rows.count)]))
        }

        @Test(arguments: ContractTransport.allCases)
        func everyAnchoredPageIsTheModelsSliceWithItsOffset(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            var collapsed = model.defaultState
            for group in ["main-courses", "beer"] {
                #expect(try await client.setExpansion(group, false, session: session).status == 200)
                _ = model.apply(group, expanded: false, to: &collapsed)
            }
            for (sessionID, state) in [(nil, model.defaultState), (session, collapsed)]
                as [(String?, LiveMenuModel.State)]
            {
                let rows = model.rows(state)
                for (index, row) in rows.enumerated() {
                    for anchor in ["after", "before", "around"] {
                        for limit in [1, 4, 7] {
                            let target = "/rows?\(anchor)=\(row.id)&limit=\(limit)"
                            let response = try await client.get(target, session: sessionID)
                            #expect(response.status == 200, "\(target): \(response)")
                            #expect(
                                try response.keys() == [
                                    "version", "revision", "count", "leafCount", "offset", "limit", "rows"
                                ])
                            let page = try response.decode(LiveRowsPage.self)
                            let expected = Self.expectedPage(anchor, index: index, limit: limit, rows: rows)
                            #expect(
                                page.offset == expected.offset && page.limit == limit && page.count == rows.count,
                                "\(target)")
                            #expect(page.rows == expected.rows, "\(target)")
                            if anchor == "around" { #expect(page.rows.contains(row), "\(target)") }
                        }
                    }
                }
            }
        }

        @Test(arguments: ContractTransport.allCases)
        func headOfAnAnchoredPageAndOfANodeHasTheGETsHeaders(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let get = try await client.get("/rows?around=beer&limit=3")
            let head = try await client.send("HEAD", "/rows?around=beer&limit=3")
            #expect(head.status == 200)
            // The HTTP layer drops a HEAD's body: only the live transport has one to drop.
            if transport == .live { #expect(head.body.isEmpty) }
            #expect(head.header("Content-Length") == get.header("Content-Length"))
            #expect(try await client.send("HEAD", "/rows?around=nope").status == 404)
            let node = try await client.get("/nodes/beer")
            let nodeHead = try await client.send("HEAD", "/nodes/beer")
            #expect(nodeHead.status == 200 && nodeHead.header("Content-Length") == node.header("Content-Length"))
            #expect(try await client.send("HEAD", "/nodes/nope").status == 404)
        }

        @Test(arguments: ContractTransport.allCases)
        func aHiddenAnchorIs409NotVisibleWithItsPath(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            #expect(try await client.setExpansion("drinks", false, session: session).status == 200)
            for anchor in ["after", "before", "around"] {
                let response = try await client.get("/rows?\(anchor)=snow-beer", session: session)
                #expect(response.status == 409)
                liveExpectJSONHeaders(response)
                let error = try #require(try response.json()["error"])
                #expect(error["code"] == .string("not_visible"))
                #expect(error["path"] == .array([.string("drinks"), .string("beer")]))
                #expect(Set(try #require(error.objectValue).keys) == ["code", "message", "path"])
            }
            // Revealed, the same anchor pages.
            #expect(try await client.send("POST", "/nodes/snow-beer/reveal", session: session).status == 200)
            let page = try await client.get("/rows?after=snow-beer&limit=1", session: session).decode(LiveRowsPage.self)
            #expect(page.offset == 19 && page.rows.map(\.id) == ["tsingtao-beer"])
        }

        @Test(arguments: ContractTransport.allCases)
        func placementsAreExclusiveAndAnchorsMustNameANode(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let placements = ["offset=0", "after=beer", "before=beer", "around=beer"]
            for (first, a) in placements.enumerated() {
                for b in placements[(first + 1)...] {
                    let response = try await client.get("/rows?\(b)&\(a)")
                    #expect(response.status == 400)
                    let error = try response.decode(LiveErrorBody.self).error
                    let names = [a, b].map { String($0.prefix { $0 != "=" }) }
                    #expect(error.code == "invalid_parameter")
                    #expect(
                        error.message
                            == "\(names[0]) and \(names[1]) cannot be used together; give at most one of offset, after, before and around"
                    )
                }
            }
            let unknown = try await client.get("/rows?before=desserts")
            #expect(unknown.status == 404)
            #expect(try unknown.decode(LiveErrorBody.self).error.code == "unknown_node")
            for target in ["/rows?after=", "/rows?after=beer&after=beer"] {
                let response = try await client.get(target)
                #expect(response.status == 400, "\(target)")
                #expect(try response.decode(LiveErrorBody.self).error.code == "invalid_parameter")
            }
        }
    }
}
