// A write whose answer is lost: the table finds out from the changes feed whether it was
// applied, and only the idempotent PUT may go again (never a second toggle).

import Foundation
import MenuClient
import Testing

@Suite(.timeLimit(.minutes(10))) struct LostAnswerTests {
    @Test func aToggleWhoseAnswerWasLostIsResolvedFromTheFeedAndNeverSentTwice() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 3, subgroups: 3, leaves: 4))
        defer { server.shutdown() }
        let proxy = try LossyProxy(upstreamPort: server.port, dropAnswersTo: "POST /groups/", times: 1)
        defer { proxy.stop() }
        let session = MenuSession(
            configuration: MenuClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(proxy.port)")!))
        let table = try await MenuTable(session: session)
        _ = try await table.rows(in: 0 ..< table.count)
        // The toggle reaches the server and is applied; its answer never comes back. The table
        // learns from the feed that it was applied, and its retry (the PUT of "collapsed") changes nothing.
        let update = try await table.toggle("g1")
        #expect(proxy.droppedRequests == ["POST /groups/g1/toggle HTTP/1.1"])
        // URLSession on Linux (libcurl) itself sends a request again, a POST too, when the reused
        // connection it went on closes without an answer. That copy carries the same If-Match and
        // gets 412, so the server applied one toggle (revision 1) and the table's retry is the PUT.
        let writes = proxy.requests.filter { $0.hasPrefix("POST /groups/") || $0.hasPrefix("PUT /groups/") }
        #expect((1 ... 2).contains(writes.count { $0 == "POST /groups/g1/toggle HTTP/1.1" }), "\(writes)")
        #expect(
            writes.last == "PUT /groups/g1/expansion HTTP/1.1" && writes.count { $0.hasPrefix("PUT") } == 1, "\(writes)"
        )
        #expect(update.changes.map(\.splice.removed) == [8] && table.revision == 1)
        let fresh = try await server.freshTable(sessionID: try #require(await session.id))
        #expect(fresh.revision == 1 && fresh.rows.first { $0.id == "g1" }?.isExpanded == false)
        try await expectCacheMatchesServer(table, server: server, "after the lost answer")
    }
}
