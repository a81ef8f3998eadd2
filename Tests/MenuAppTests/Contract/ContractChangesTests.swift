// GET /changes?since=R, written once and run over both transports: the splices from revision R to
// now, in order, bounded by --change-history; older, or from before a reload, is 410 gone.

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
    @Suite("Contract: GET /changes answers the splices since a revision")
    struct ContractChangesTests {
        /// The JSON of the `change` member of a write's answer, or of one entry of /changes.
        private func change(of object: LiveJSON) -> LiveJSON? {
            if case .object(let members) = object { return members["change"] }
            return nil
        }

        private func entries(_ response: LiveResponse) throws -> [LiveJSON] {
            guard case .object(let members) = try response.json(), case .array(let entries)? = members["changes"] else {
                return []
            }
            return entries
        }

        @Test(arguments: ContractTransport.allCases)
        func aSecondDeviceGetsEveryWritesSpliceInOrderAndCatchesUpItsCount(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let laptop = server.client()
            let phone = server.client()
            let session = try await laptop.newSession()
            let phoneRows = try await phone.get("/rows?limit=500", session: session).decode(LiveRowsPage.self)
            var written: [LiveJSON?] = []
            for write in ["main-courses", "drinks", "beer", "drinks"] {  // beer while drinks is collapsed: no splice
                written.append(change(of: try await laptop.toggle(write, session: session).json()))
            }
            _ = try await laptop.setExpansion("main-courses", false, session: session)  // a no-op: no revision
            let response = try await phone.get("/changes?since=\(phoneRows.revision)", session: session)
            #expect(response.status == 200)
            liveExpectJSONHeaders(response)
            #expect(try response.keys() == ["version", "revision", "changes"])
            #expect(try response.decode(LiveRevision.self).revision == 4)
            let got = try entries(response)
            #expect(got.map { change(of: $0) } == written)
            #expect(
                got.map { entry -> LiveJSON? in if case .object(let m) = entry { m["revision"] } else { nil } }
                    == [1, 2, 3, 4].map { .number(Double($0)) })
            #expect(written[2] == .null)
            // The phone applies the splices to its row count and gets the laptop's.
            var count = phoneRows.count
            for entry in got {
                if case .object(let splice)? = change(of: entry), case .number(let inserted)? = splice["inserted"],
                    case .number(let removed)? = splice["removed"]
                {
                    count += Int(inserted) - Int(removed)
                }
            }
            #expect(count == (try await phone.get("/count", session: session).decode(LiveCount.self).count))
            // Up to date: no changes. Past the revision, or no since: 400.
            #expect(try entries(try await phone.get("/changes?since=4", session: session)).isEmpty)
            try liveExpectError(
                try await phone.get("/changes?since=5", session: session), status: 400, code: "invalid_parameter")
            try liveExpectError(
                try await phone.get("/changes", session: session), status: 400, code: "invalid_parameter")
            // Without a session: the default view, revision 0.
            #expect(try await phone.get("/changes?since=0").status == 200)
            try liveExpectError(try await phone.get("/changes?since=1"), status: 400, code: "invalid_parameter")
        }

        @Test(arguments: ContractTransport.allCases)
        func theHistoryKeepsTheLastChangeHistoryEntriesAndAnOlderSinceIsGone(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start { $0.changeHistory = 2 }
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            for group in ["main-courses", "drinks", "beer"] { _ = try await client.toggle(group, session: session) }
            try liveExpectError(try await client.get("/changes?since=0", session: session), status: 410, code: "gone")
            #expect(try entries(try await client.get("/changes?since=1", session: session)).count == 2)
            #expect(try entries(try await client.get("/changes?since=2", session: session)).count == 1)
        }

        @Test(arguments: ContractTransport.allCases)
        func aReloadIsOneEntryAndTheNextReloadForgetsTheEntriesBeforeIt(over transport: ContractTransport)
            async throws
        {
            let reloadable = try ContractReloadableServer(over: transport)
            defer { reloadable.shutdown() }
            let client = reloadable.server.client()
            let session = try await client.newSession()
            _ = try await client.toggle("mains", session: session)
            let before = try await client.get("/changes?since=0", session: session).decode(LiveChanges.self)
            #expect(before.changes.count == 1)
            #expect(try reloadable.reload(to: 2))
            // The reload is the next revision: its entry names the new menu and its splices.
            let after = try await client.get("/changes?since=0", session: session).decode(LiveChanges.self)
            #expect(after.version != before.version)
            #expect(after.revision == 2)
            try #require(after.changes.map(\.revision) == [1, 2])
            #expect(after.changes[0].change != nil && after.changes[0].reload == nil)
            let reload = try #require(after.changes[1].reload)
            #expect(reload.version == after.version)
            #expect(!reload.reconfigured.isEmpty, "every title changed")
            // The next reload frees the menu before the first: a since before it is gone.
            #expect(try reloadable.reload(to: 3))
            try liveExpectError(
                try await client.get("/changes?since=1", session: session), status: 410, code: "gone")
            let second = try await client.get("/changes?since=2", session: session).decode(LiveChanges.self)
            try #require(second.changes.map(\.revision) == [3])
            #expect(second.changes[0].reload?.version == second.version)
            // Writes after the reload are entries again.
            _ = try await client.toggle("mains", session: session)
            #expect(try entries(try await client.get("/changes?since=3", session: session)).count == 1)
        }
    }
}
