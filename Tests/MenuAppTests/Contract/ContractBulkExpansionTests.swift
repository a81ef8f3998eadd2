// PUT /expansion (expand all, collapse all, reset) and PUT /groups/{id}/expansion with
// "recursive": true, written once and run over both transports: the whole table or the group's
// descendants as one splice, one revision per change and none for a repeat, If-Match honoured.

import Foundation
import MenuApp
import MenuAppTestSupport
import MenuServiceTestSupport
import MenuTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AppTests {
    @Suite("Contract: expand all, collapse all, reset, and recursive sets")
    struct ContractBulkExpansionTests {
        private static func all(_ mode: String) -> [UInt8] { Array("{\"all\":\"\(mode)\"}".utf8) }

        private static func subtree(_ isExpanded: Bool) -> [UInt8] {
            Array("{\"isExpanded\":\(isExpanded),\"recursive\":true}".utf8)
        }

        private func rows(_ client: some ContractClient, _ session: String?) async throws -> [LiveRow] {
            try await client.get("/rows?limit=500", session: session).decode(LiveRowsPage.self).rows
        }

        @Test(arguments: ContractTransport.allCases)
        func expandAllCollapseAllAndResetEachReplaceTheWholeTableOnce(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let defaults = try await rows(client, nil)
            // Without a session: one is created, holding the result.
            let expanded = try await client.send("PUT", "/expansion", body: Self.all("expanded"))
            #expect(expanded.status == 200)
            let opened = try expanded.decode(LiveWrite.self)
            let session = opened.sessionId
            #expect(expanded.header("X-Session-Id") == session)
            #expect(try expanded.keys() == ["version", "revision", "sessionId", "all", "count", "leafCount", "change"])
            let everything = try await rows(client, session)
            #expect(opened.revision == 1 && opened.all == "expanded" && opened.count == everything.count)
            #expect(opened.change == LiveSplice(at: 0, inserted: everything.count, removed: defaults.count))
            #expect(everything.allSatisfy { !$0.isGroup || $0.isExpanded == true })
            // Collapse all: the top level only, every group closed.
            let closed = try await client.send("PUT", "/expansion", session: session, body: Self.all("collapsed"))
                .decode(LiveWrite.self)
            let top = try await rows(client, session)
            #expect(closed.revision == 2 && top.allSatisfy { $0.depth == 0 && $0.isExpanded != true })
            #expect(closed.change == LiveSplice(at: 0, inserted: top.count, removed: everything.count))
            // A repeat changes nothing: the same revision, the table replaced by itself.
            let again = try await client.send("PUT", "/expansion", session: session, body: Self.all("collapsed"))
                .decode(LiveWrite.self)
            #expect(again.revision == 2 && again.change == LiveSplice(at: 0, inserted: top.count, removed: top.count))
            // Reset: the default table again, and the feed holds one whole-table splice per revision.
            let reset = try await client.send("PUT", "/expansion", session: session, body: Self.all("default")).decode(
                LiveWrite.self)
            let afterReset = try await rows(client, session)
            #expect(reset.revision == 3 && afterReset == defaults)
            let feed = try await client.get("/changes?since=0", session: session)
            #expect(
                try feed.decode(LiveChanges.self).changes.map(\.change) == [opened.change, closed.change, reset.change])
        }

        @Test(arguments: ContractTransport.allCases)
        func aRecursiveSetCoversTheWholeSubtreeAndForgetsTheChangesInsideIt(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            _ = try await client.setExpansion("beer", false, session: session)
            let before = try await rows(client, session)
            let drinks = try #require(before.first { $0.id == "drinks" })
            // Collapse drinks and everything under it: its visible descendants go.
            let closed = try await client.send(
                "PUT", "/groups/drinks/expansion", session: session, body: Self.subtree(false))
            #expect(closed.status == 200)
            let closing = try closed.decode(LiveChange.self)
            #expect(
                closing.revision == 2 && closing.id == "drinks" && !closing.isExpanded && closing.index == drinks.index)
            #expect(
                closing.change
                    == LiveSplice(
                        at: drinks.index + 1, inserted: 0, removed: try #require(drinks.visibleDescendantCount)))
            // Opening drinks alone now shows its subgroups closed: the mark covered them.
            _ = try await client.setExpansion("drinks", true, session: session)
            let shallow = try await rows(client, session)
            #expect(shallow.filter { $0.parentId == "drinks" && $0.isGroup }.allSatisfy { $0.isExpanded == false })
            // Expand it recursively: every group under it opens, beer's collapse forgotten; the splice
            // replaces exactly the rows between drinks and what follows its subtree.
            let opened = try await client.send(
                "PUT", "/groups/drinks/expansion", session: session, body: Self.subtree(true)
            ).decode(LiveChange.self)
            let deep = try await rows(client, session)
            let shown = shallow.filter { $0.parentId == "drinks" }.count
            let under = try #require(deep.first { $0.id == "drinks" }?.visibleDescendantCount)
            #expect(opened.change == LiveSplice(at: drinks.index + 1, inserted: under, removed: shown))
            #expect(deep[(drinks.index + 1)...].prefix(under).allSatisfy { !$0.isGroup || $0.isExpanded == true })
            #expect(deep.prefix(drinks.index) == before.prefix(drinks.index))
            // The same again: no revision.
            let repeated = try await client.send(
                "PUT", "/groups/drinks/expansion", session: session, body: Self.subtree(true)
            ).decode(LiveChange.self)
            #expect(repeated.revision == opened.revision)
            // A row is not a group, recursive or not.
            try liveExpectError(
                try await client.send(
                    "PUT", "/groups/tsingtao-beer/expansion", session: session, body: Self.subtree(true)),
                status: 409, code: "not_a_group")
        }

        @Test(arguments: ContractTransport.allCases)
        func aStaleIfMatchRefusesExpandAllAndBadBodiesAreInvalidBody(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            let tag0 = try #require(try await client.get("/count", session: session).header("ETag"))
            _ = try await client.toggle("drinks", session: session)
            let refused = try await client.send(
                "PUT", "/expansion", session: session, headers: [("If-Match", tag0)], body: Self.all("expanded"))
            try liveExpectError(refused, status: 412, code: "precondition_failed", extraKeys: ["revision"])
            let unchanged = try await client.get("/count", session: session).decode(LiveRevision.self)
            #expect(unchanged.revision == 1)
            for body in [
                #"{"all":"open"}"#, #"{"all":true}"#, "{}", #"{"all":"expanded","all":"collapsed"}"#,
                #"{"all":"expanded""#, ""
            ] {
                try liveExpectError(
                    try await client.send("PUT", "/expansion", session: session, body: Array(body.utf8)),
                    status: 400, code: "invalid_body")
            }
            for body in [
                #"{"isExpanded":true,"recursive":"yes"}"#, #"{"isExpanded":true,"recursive":1}"#, #"{"recursive":true}"#
            ] {
                try liveExpectError(
                    try await client.send("PUT", "/groups/drinks/expansion", session: session, body: Array(body.utf8)),
                    status: 400, code: "invalid_body")
            }
            let still = try await client.get("/count", session: session).decode(LiveRevision.self)
            #expect(still.revision == 1)
        }
    }
}
