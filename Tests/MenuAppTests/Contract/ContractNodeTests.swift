// GET /nodes/{id} and POST /nodes/{id}/reveal, run over both transports and checked against the
// tests' own naive model of the menu (LiveMenuModel), for every node of the test menu.

import Foundation
import MenuAppTestSupport
import MenuServiceTestSupport
import MenuTestSupport
import Testing

extension AppTests {
    @Suite("Contract: locating and revealing nodes, in-process and over real HTTP")
    struct ContractNodeTests {
        let model = LiveMenuModel.menu

        /// The ids of the groups enclosing `id`, from the top, read from the model's child lists.
        func path(of id: String) -> [String] {
            var parents: [Int: Int] = [:]
            for (index, node) in model.nodes.enumerated() {
                for child in node.children ?? [] { parents[child] = index }
            }
            var path: [String] = []
            var current = model.node(id)
            while let node = current, let parent = parents[node] {
                path.insert(model.nodes[parent].id, at: 0)
                current = parent
            }
            return path
        }

        /// A session with every group collapsed, and the model's state for it.
        func allCollapsed(_ client: any ContractClient) async throws -> (session: String, state: LiveMenuModel.State) {
            let session = try await client.newSession()
            var state = model.defaultState
            for group in model.groupIDs {
                #expect(try await client.setExpansion(group, false, session: session).status == 200)
                _ = model.apply(group, expanded: false, to: &state)
            }
            return (session, state)
        }

        @Test(arguments: ContractTransport.allCases)
        func everyNodeIsLocatedAsTheModelPlacesItVisibleOrHidden(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let (session, collapsed) = try await allCollapsed(client)
            for (sessionID, state) in [(nil, model.defaultState), (session, collapsed)]
                as [(String?, LiveMenuModel.State)]
            {
                let rows = model.rows(state)
                for node in model.nodes {
                    let response = try await client.get("/nodes/\(node.id)", session: sessionID)
                    #expect(response.status == 200, "\(response)")
                    liveExpectJSONHeaders(response)
                    #expect(try response.keys() == ["version", "id", "index", "path", "row"])
                    let location = try response.decode(LiveNode.self)
                    let row = rows.first { $0.id == node.id }
                    #expect(location.id == node.id)
                    #expect(location.index == row?.index, "\(node.id)")
                    #expect(location.row == row, "\(node.id)")
                    #expect(location.path == path(of: node.id), "\(node.id)")
                }
            }
        }

        @Test(arguments: ContractTransport.allCases)
        func revealOfEveryNodeUnderCollapsedGroupsIsOneSpliceTheModelAgreesWith(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            for node in model.nodes {
                var (session, state) = try await allCollapsed(client)
                let before = model.rows(state)
                let response = try await client.send("POST", "/nodes/\(node.id)/reveal", session: session)
                #expect(response.status == 200, "\(response)")
                #expect(response.header("X-Session-Id") == session)
                #expect(try response.keys() == liveChangeKeys)
                let answer = try response.decode(LiveChange.self)
                for group in path(of: node.id) { _ = model.apply(group, expanded: true, to: &state) }
                let after = model.rows(state)
                let index = try #require(after.firstIndex { $0.id == node.id }, "\(node.id)")
                #expect(answer.id == node.id && answer.index == index && answer.count == after.count, "\(node.id)")
                #expect(answer.isExpanded == false)  // every group is collapsed, and a row answers false
                if path(of: node.id).isEmpty {
                    #expect(answer.change == nil, "\(node.id): visible already")
                } else {
                    // The rows before and after differ by one insertion at `at`, right after the top group.
                    let splice = try #require(answer.change, "\(node.id)")
                    #expect(splice.removed == 0 && splice.inserted == after.count - before.count)
                    #expect(before[splice.at - 1].id == path(of: node.id)[0])
                    #expect(Array(after[..<splice.at]).map(\.id) == Array(before[..<splice.at]).map(\.id))
                    #expect(
                        Array(after[(splice.at + splice.inserted)...]).map(\.id)
                            == Array(before[splice.at...]).map(\.id))
                }
                // The server's table is the model's, and a second reveal changes nothing.
                let page = try await client.get("/rows?limit=500", session: session).decode(LiveRowsPage.self)
                #expect(page.rows == after, "\(node.id)")
                let again = try await client.send("POST", "/nodes/\(node.id)/reveal", session: session).decode(
                    LiveChange.self)
                #expect(again.change == nil && again.index == index && again.count == after.count)
            }
        }

        @Test(arguments: ContractTransport.allCases)
        func revealWithoutASessionCreatesOne(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let response = try await client.send("POST", "/nodes/snow-beer/reveal")
            #expect(response.status == 200)
            let answer = try response.decode(LiveChange.self)
            #expect(liveIsSessionID(answer.sessionId) && response.header("X-Session-Id") == answer.sessionId)
            #expect(answer.index == 18 && answer.change == nil && answer.count == 30)
        }

        @Test(arguments: ContractTransport.allCases)
        func anUnknownNodeIs404UnknownNodeForBothRoutes(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            for response in [
                try await client.get("/nodes/desserts"),
                try await client.send("POST", "/nodes/desserts/reveal", session: session)
            ] {
                #expect(response.status == 404)
                liveExpectJSONHeaders(response)
                let error = try response.decode(LiveErrorBody.self).error
                #expect(error.code == "unknown_node")
                #expect(error.message == #"no group or row has id "desserts"; GET /rows lists the ids"#)
            }
            // The failed reveal changed nothing.
            #expect(try await client.get("/count", session: session).decode(LiveCount.self).count == 30)
        }
    }
}
