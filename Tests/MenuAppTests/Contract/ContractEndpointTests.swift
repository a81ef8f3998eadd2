// The successful answers of every endpoint, written once and run over both transports: a request
// value to the started app's MenuAPI, and URLSession against its listener (libmicrohttpd on
// 127.0.0.1, port 0).

import Foundation
import MenuAppTestSupport
import MenuServiceTestSupport
import MenuTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AppTests {
    @Suite("Contract: endpoints answer the contract in-process and over real HTTP")
    struct ContractEndpointTests {
        let model = LiveMenuModel.menu

        // MARK: GET /healthz

        @Test(arguments: ContractTransport.allCases)
        func healthzAnswers200StatusOK(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let response = try await server.client().get("/healthz")
            #expect(response.status == 200)
            liveExpectJSONHeaders(response)
            #expect(response.text == #"{"status":"ok"}"#)
            #expect(try response.json() == .object(["status": .string("ok")]))
        }

        // MARK: GET /count

        @Test(arguments: ContractTransport.allCases)
        func countWithoutSessionIsTheDefaultExpansion30Rows24Leaves(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let response = try await server.client().get("/count")
            #expect(response.status == 200)
            liveExpectJSONHeaders(response)
            #expect(try response.keys() == ["version", "revision", "count", "leafCount"])
            let count = try response.decode(LiveCount.self)
            #expect(count.count == 30)
            #expect(count.leafCount == 24)
            #expect(!count.version.isEmpty)
            #expect(response.header("X-Session-Id") == nil)
        }

        // MARK: GET /rows

        @Test(arguments: ContractTransport.allCases)
        func rowsWithoutParametersIsTheWholeDefaultTableWithOffset0Limit50(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let response = try await client.get("/rows")
            #expect(response.status == 200)
            liveExpectJSONHeaders(response)
            #expect(try response.keys() == ["version", "revision", "count", "leafCount", "offset", "limit", "rows"])
            let page = try response.decode(LiveRowsPage.self)
            #expect(page.count == 30)
            #expect(page.leafCount == 24)
            #expect(page.offset == 0)
            #expect(page.limit == 50)
            let expected = model.rows(model.defaultState)
            #expect(page.rows.count == 30)
            for (row, want) in zip(page.rows, expected) {
                #expect(row == want)
            }
            #expect(
                page.rows.map(\.id).prefix(4) == [
                    "main-courses", "kung-pao-chicken", "dry-braised-fish", "twice-cooked-pork"
                ])
            #expect(page.rows.filter(\.isGroup).map(\.index) == [0, 10, 16, 17, 21, 25])
            let version = try await client.get("/count").decode(LiveCount.self).version
            #expect(page.version == version)
        }

        @Test(arguments: ContractTransport.allCases)
        func rowObjectsCarryExactlyTheDocumentedKeys(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let response = try await server.client().get("/rows?limit=500")
            #expect(response.status == 200)
            let rows = try #require(try response.json()["rows"]?.arrayValue)
            #expect(rows.count == 30)
            let placed: Set<String> = ["index", "level", "posInSet", "setSize", "id", "title", "depth", "parentId"]
            for row in rows {
                let keys = Set(try #require(row.objectValue).keys)
                if row["isGroup"] == .bool(true) {
                    #expect(
                        keys
                            == placed.union([
                                "isGroup", "isExpanded", "visibleDescendantCount", "childCount", "attributes",
                                "selection", "selectedCount", "selectableCount"
                            ]), "\(row)")
                } else {
                    #expect(keys == placed.union(["isGroup", "attributes", "selected"]), "\(row)")
                }
            }
            // Where a screen reader places a row: its level, and its place among its siblings.
            func placement(_ id: String) throws -> [LiveJSON?] {
                let row = try #require(rows.first { $0["id"] == .string(id) })
                return [row["level"], row["posInSet"], row["setSize"]]
            }
            #expect(try placement("main-courses") == [.number(1), .number(1), .number(3)])
            #expect(try placement("drinks") == [.number(1), .number(3), .number(3)])
            #expect(try placement("dry-braised-fish") == [.number(2), .number(2), .number(9)])
            #expect(try placement("tsingtao-beer") == [.number(3), .number(2), .number(3)])
            #expect(try placement("zhuyeqing-tea") == [.number(3), .number(4), .number(4)])
        }

        @Test(arguments: ContractTransport.allCases)
        func aPageWithAncestorsCarriesTheRowsOfItsFirstRowsGroupsFromTheTop(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let all = try await client.get("/rows?limit=500").decode(LiveRowsPage.self).rows
            func ancestors(_ target: String) async throws -> [LiveRow]? {
                let response = try await client.get(target)
                #expect(response.status == 200, "\(target): \(response)")
                let object = try response.json()
                guard object["ancestors"] != nil else { return nil }
                struct Page: Decodable { var ancestors: [LiveRow] }
                return try response.decode(Page.self).ancestors
            }
            // Snow beer (row 18) sits in drinks (16) and beer (17): their rows, as the page shows them.
            #expect(try await ancestors("/rows?offset=18&limit=2&ancestors=true") == [all[16], all[17]])
            #expect(try await ancestors("/rows?offset=17&limit=1&ancestors=true") == [all[16]])
            #expect(try await ancestors("/rows?offset=0&ancestors=true") == [], "a top-level row has none")
            #expect(try await ancestors("/rows?offset=500&ancestors=true") == [], "past the end: none")
            #expect(try await ancestors("/rows?offset=18&ancestors=false") == nil)
            #expect(try await ancestors("/rows?offset=18") == nil, "only when asked")
            // In a filtered tree, the groups shown above the first row, at their filtered indices.
            let filtered = try await client.get("/rows?q=%E9%9D%92%E5%B3%B6&limit=10").decode(LiveRowsPage.self).rows
            #expect(filtered.map(\.id) == ["drinks", "beer", "tsingtao-beer"])
            #expect(
                try await ancestors("/rows?q=%E9%9D%92%E5%B3%B6&offset=2&ancestors=true") == Array(filtered[0 ..< 2]))
            for bad in ["yes", "TRUE", "1", ""] {
                let response = try await client.get("/rows?ancestors=\(bad)")
                #expect(response.status == 400, "ancestors=\(bad)")
                #expect(try response.decode(LiveErrorBody.self).error.code == "invalid_parameter")
            }
        }

        @Test(arguments: ContractTransport.allCases)
        func rowsAttributesAreTheConfigsAttributesUnchanged(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let page = try await server.client().get("/rows?limit=500").decode(LiveRowsPage.self)
            let kungPao = try #require(page.rows.first { $0.id == "kung-pao-chicken" })
            #expect(
                kungPao.attributes == [
                    "price": .number(38), "currency": .string("CNY"), "spicy": .number(2),
                    "vegetarian": .bool(false), "en": .string("Kung Pao Chicken")
                ])
            let danDan = try #require(page.rows.first { $0.id == "dan-dan-noodles" })
            #expect(danDan.attributes?["price"] == .number(12.5))
            for row in page.rows {
                let configured = model.nodes[try #require(model.node(row.id))].attributes
                #expect(row.attributes == configured, "\(row.id)")
            }
        }

        @Test(arguments: ContractTransport.allCases)
        func rowsOffsetAndLimitSelectAWindowOfTheTable(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let page = try await client.get("/rows?offset=16&limit=3").decode(LiveRowsPage.self)
            #expect(page.offset == 16)
            #expect(page.limit == 3)
            #expect(page.count == 30)
            #expect(page.leafCount == 24)
            #expect(page.rows.map(\.index) == [16, 17, 18])
            #expect(page.rows.map(\.id) == ["drinks", "beer", "snow-beer"])
            #expect(page.rows.map(\.depth) == [0, 1, 2])
            #expect(page.rows.map(\.title) == ["酒水", "啤酒", "雪花啤酒"])
            #expect(page.rows.map(\.childCount) == [3, 3, nil])
            #expect(page.rows.map(\.isExpanded) == [true, true, nil])

            // Pages of 7 put together are the whole table.
            var joined: [LiveRow] = []
            for offset in stride(from: 0, to: 35, by: 7) {
                joined += try await client.get("/rows?offset=\(offset)&limit=7").decode(LiveRowsPage.self).rows
            }
            #expect(joined == model.rows(model.defaultState))

            let tail = try await client.get("/rows?offset=29&limit=5").decode(LiveRowsPage.self)
            #expect(tail.rows.map(\.id) == ["zhuyeqing-tea"])
            #expect(tail.limit == 5)
        }

        @Test(arguments: ContractTransport.allCases, [30, 31, 500, 2_147_483_647])
        func rowsOffsetAtOrPastCountGivesEmptyRows(over transport: ContractTransport, offset: Int) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let response = try await server.client().get("/rows?offset=\(offset)")
            #expect(response.status == 200)
            liveExpectJSONHeaders(response)
            let page = try response.decode(LiveRowsPage.self)
            #expect(page.rows.isEmpty)
            #expect(page.offset == offset)
            #expect(page.limit == 50)
            #expect(page.count == 30)
            #expect(page.leafCount == 24)
            #expect(response.text.hasSuffix(#""rows":[]}"#))
        }

        @Test(arguments: ContractTransport.allCases)
        func rowsLimitAccepts1Through500(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let one = try await client.get("/rows?limit=1").decode(LiveRowsPage.self)
            #expect(one.rows.map(\.id) == ["main-courses"])
            #expect(one.limit == 1)
            let max = try await client.get("/rows?limit=500&offset=0").decode(LiveRowsPage.self)
            #expect(max.rows.count == 30)
            #expect(max.limit == 500)
            let leadingZeros = try await client.get("/rows?offset=002&limit=0003").decode(LiveRowsPage.self)
            #expect(leadingZeros.offset == 2)
            #expect(leadingZeros.limit == 3)
            #expect(leadingZeros.rows.map(\.index) == [2, 3, 4])
        }

        // MARK: POST /sessions

        @Test(arguments: ContractTransport.allCases)
        func postSessionsAnswers201WithTheSameIdInHeaderAndBody(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let response = try await client.send("POST", "/sessions")
            #expect(response.status == 201)
            liveExpectJSONHeaders(response)
            #expect(try response.keys() == ["ignored", "revision", "sessionId"])
            let id = try response.decode(LiveSessionBody.self).sessionId
            #expect(liveIsSessionID(id), "\(id)")
            #expect(response.header("X-Session-Id") == id)

            let other = try await client.newSession()
            #expect(other != id)

            // A new session starts from the default expansion.
            let count = try await client.get("/count", session: id).decode(LiveCount.self)
            #expect(count.count == 30)
            #expect(count.leafCount == 24)
        }

        // MARK: POST /groups/{id}/toggle

        @Test(arguments: ContractTransport.allCases)
        func collapsingMainCoursesRemovesItsNineRowsRightAfterIndex0(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            let version = try await client.get("/count").decode(LiveCount.self).version

            let response = try await client.toggle("main-courses", session: session)
            #expect(response.status == 200)
            liveExpectJSONHeaders(response)
            #expect(response.header("X-Session-Id") == session)
            #expect(try response.keys() == liveChangeKeys)
            let change = try response.decode(LiveChange.self)
            #expect(change.version == version)
            #expect(change.sessionId == session)
            #expect(change.id == "main-courses")
            #expect(change.isExpanded == false)
            #expect(change.index == 0)
            #expect(change.count == 21)
            #expect(change.leafCount == 15)
            #expect(change.change == LiveSplice(at: 1, inserted: 0, removed: 9))

            let count = try await client.get("/count", session: session).decode(LiveCount.self)
            #expect(count.count == 21)
            #expect(count.leafCount == 15)
            var state = model.defaultState
            _ = model.apply("main-courses", expanded: false, to: &state)
            let page = try await client.get("/rows", session: session).decode(LiveRowsPage.self)
            #expect(page.rows == model.rows(state))
            #expect(page.rows.prefix(2).map(\.id) == ["main-courses", "breakfast"])
            #expect(page.rows.first?.isExpanded == false)
        }

        @Test(arguments: ContractTransport.allCases)
        func togglingTwiceReinsertsTheRowsAndRestoresTheDefaultTable(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            _ = try await client.toggle("main-courses", session: session)
            let second = try await client.toggle("main-courses", session: session).decode(LiveChange.self)
            #expect(second.isExpanded == true)
            #expect(second.index == 0)
            #expect(second.count == 30)
            #expect(second.leafCount == 24)
            #expect(second.change == LiveSplice(at: 1, inserted: 9, removed: 0))
            let page = try await client.get("/rows", session: session).decode(LiveRowsPage.self)
            #expect(page.rows == model.rows(model.defaultState))
        }

        @Test(arguments: ContractTransport.allCases)
        func collapsingNestedBeerRemovesItsThreeRowsAfterIndex17(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            let change = try await client.toggle("beer", session: session).decode(LiveChange.self)
            #expect(change.id == "beer")
            #expect(change.isExpanded == false)
            #expect(change.index == 17)
            #expect(change.count == 27)
            #expect(change.leafCount == 21)
            #expect(change.change == LiveSplice(at: 18, inserted: 0, removed: 3))
        }

        @Test(arguments: ContractTransport.allCases)
        func togglingBeerWhileDrinksIsCollapsedGivesNullIndexAndNullChange(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            let drinks = try await client.setExpansion("drinks", false, session: session).decode(LiveChange.self)
            #expect(drinks.index == 16)
            #expect(drinks.change == LiveSplice(at: 17, inserted: 0, removed: 13))
            #expect(drinks.count == 17)
            #expect(drinks.leafCount == 14)

            let response = try await client.toggle("beer", session: session)
            #expect(response.status == 200)
            liveExpectJSONHeaders(response)
            #expect(try response.keys() == liveChangeKeys)
            #expect(response.text.contains(#""index":null"#))
            #expect(response.text.contains(#""change":null"#))
            let beer = try response.decode(LiveChange.self)
            #expect(beer.id == "beer")
            #expect(beer.isExpanded == false)
            #expect(beer.index == nil)
            #expect(beer.change == nil)
            #expect(beer.count == 17)
            #expect(beer.leafCount == 14)

            // Expanding drinks again keeps beer collapsed: beer (1 row) + baijiu (4) + soft-drinks (5) come back.
            let reopened = try await client.setExpansion("drinks", true, session: session).decode(LiveChange.self)
            #expect(reopened.change == LiveSplice(at: 17, inserted: 10, removed: 0))
            #expect(reopened.count == 27)
            #expect(reopened.leafCount == 21)
            var state = model.defaultState
            _ = model.apply("beer", expanded: false, to: &state)
            let page = try await client.get("/rows", session: session).decode(LiveRowsPage.self)
            #expect(page.rows == model.rows(state))
            #expect(page.rows.first { $0.id == "beer" }?.isExpanded == false)
        }

        // MARK: PUT /groups/{id}/expansion

        @Test(arguments: ContractTransport.allCases)
        func putExpansionTwiceIsIdempotentAndTheSecondChangeIsEmpty(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            let first = try await client.setExpansion("main-courses", false, session: session)
            #expect(first.status == 200)
            liveExpectJSONHeaders(first)
            #expect(first.header("X-Session-Id") == session)
            #expect(try first.keys() == liveChangeKeys)
            let firstChange = try first.decode(LiveChange.self)
            #expect(firstChange.isExpanded == false)
            #expect(firstChange.index == 0)
            #expect(firstChange.change == LiveSplice(at: 1, inserted: 0, removed: 9))
            #expect(firstChange.count == 21)

            let second = try await client.setExpansion("main-courses", false, session: session)
            #expect(second.status == 200)
            liveExpectJSONHeaders(second)
            let secondChange = try second.decode(LiveChange.self)
            #expect(secondChange.sessionId == session)
            #expect(secondChange.isExpanded == false)
            #expect(secondChange.index == 0)
            #expect(secondChange.count == 21)
            #expect(secondChange.leafCount == 15)
            #expect(secondChange.change == LiveSplice(at: 1, inserted: 0, removed: 0))

            // Expanding an already expanded group is just as empty.
            let expanded = try await client.setExpansion("breakfast", true, session: session).decode(LiveChange.self)
            #expect(expanded.index == 1)
            #expect(expanded.change == LiveSplice(at: 2, inserted: 0, removed: 0))
            #expect(expanded.count == 21)
        }

        // MARK: Writes without a session

        enum Write: String, CaseIterable, Sendable { case toggle, put }

        @Test(arguments: ContractTransport.allCases, Write.allCases)
        func writeWithoutSessionCreatesOneAndReturnsItInHeaderAndBody(over transport: ContractTransport, write: Write)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let response =
                switch write {
                case .toggle: try await client.toggle("beer")
                case .put: try await client.setExpansion("beer", false)
                }
            #expect(response.status == 200)
            liveExpectJSONHeaders(response)
            let change = try response.decode(LiveChange.self)
            #expect(liveIsSessionID(change.sessionId), "\(change.sessionId)")
            #expect(response.header("X-Session-Id") == change.sessionId)
            #expect(change.isExpanded == false)
            #expect(change.index == 17)
            #expect(change.change == LiveSplice(at: 18, inserted: 0, removed: 3))
            #expect(change.count == 27)
            #expect(change.leafCount == 21)

            // The new session holds the change; the default expansion does not.
            let mine = try await client.get("/count", session: change.sessionId).decode(LiveCount.self)
            #expect(mine.count == 27)
            #expect(mine.leafCount == 21)
            let anonymous = try await client.get("/count").decode(LiveCount.self)
            #expect(anonymous.count == 30)

            // Every write without a session makes a different one.
            let again = try await client.toggle("beer").decode(LiveChange.self)
            #expect(again.sessionId != change.sessionId)
            #expect(again.change == LiveSplice(at: 18, inserted: 0, removed: 3))
        }

        @Test(arguments: ContractTransport.allCases)
        func sessionsAreIndependentOfEachOther(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let a = try await client.newSession()
            let b = try await client.newSession()
            _ = try await client.setExpansion("drinks", false, session: a)
            _ = try await client.setExpansion("breakfast", false, session: b)
            let countA = try await client.get("/count", session: a).decode(LiveCount.self)
            let countB = try await client.get("/count", session: b).decode(LiveCount.self)
            #expect(countA.count == 17)
            #expect(countA.leafCount == 14)
            #expect(countB.count == 25)
            #expect(countB.leafCount == 19)
            let rowsB = try await client.get("/rows", session: b).decode(LiveRowsPage.self)
            #expect(rowsB.rows.first { $0.id == "drinks" }?.isExpanded == true)
            #expect(rowsB.rows.first { $0.id == "breakfast" }?.isExpanded == false)
        }

        // MARK: DELETE /session

        @Test(arguments: ContractTransport.allCases)
        func deleteSessionAnswers204WithoutBody(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            let response = try await client.send("DELETE", "/session", session: session)
            #expect(response.status == 204)
            #expect(response.body.isEmpty)
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.header("Content-Length") == nil || response.header("Content-Length") == "0")
        }

        @Test(arguments: ContractTransport.allCases)
        func deletedSessionIs404UnknownSessionOnEveryReuse(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            _ = try await client.toggle("beer", session: session)
            #expect(try await client.send("DELETE", "/session", session: session).status == 204)

            try liveExpectError(try await client.get("/count", session: session), status: 404, code: "unknown_session")
            try liveExpectError(try await client.get("/rows", session: session), status: 404, code: "unknown_session")
            try liveExpectError(try await client.toggle("beer", session: session), status: 404, code: "unknown_session")
            try liveExpectError(
                try await client.setExpansion("beer", true, session: session), status: 404, code: "unknown_session")
            try liveExpectError(
                try await client.send("DELETE", "/session", session: session), status: 404, code: "unknown_session")
            try liveExpectError(
                try await client.get("/session", session: session), status: 404, code: "unknown_session")
        }
    }
}
