import Foundation
import MenuAppTestSupport
import MenuModel
import MenuTestSupport
import NaiveReference
import RedisClient
import RedisTestSupport
import Testing

extension AppTests {
    /// A menu reload in the changes feed, over both transports and with sessions in memory and on
    /// disk (issue 26 §5): generations of random menu edits, sessions in random states; each
    /// session's rows before, with its reload entry applied (splices, then the reconfigured rows
    /// fetched again), are its rows after in every field.
    @Suite("Contract: a reload entry takes the old rows to the new")
    struct ContractReloadEntryTests {
        /// Every row of the session's table, without `index` (its position).
        private func rows(_ client: any ContractClient, _ session: String) async throws -> [LiveJSON] {
            let page = try await client.get("/rows?offset=0&limit=500", session: session)
            try #require(page.status == 200)
            guard case .array(let rows)? = try page.json()["rows"] else { return [] }
            return rows.map { row in
                guard case .object(var fields) = row else { return row }
                fields["index"] = nil
                return .object(fields)
            }
        }

        @Test(arguments: ContractTransport.each(0 ..< 2 as Range<UInt64>))
        func generationsOfRandomEditsReachEverySessionAsEntries(over transport: ContractTransport, seed: UInt64)
            async throws
        {
            try await run(over: transport, seed: seed, onDisk: false)
        }

        @Test(arguments: ContractTransport.each(2 ..< 3 as Range<UInt64>))
        func generationsOfRandomEditsReachEveryDurableSessionAsEntries(over transport: ContractTransport, seed: UInt64)
            async throws
        {
            try await run(over: transport, seed: seed, onDisk: true)
        }

        @Test(arguments: ContractTransport.each(3 ..< 4 as Range<UInt64>))
        func generationsOfRandomEditsReachEveryRedisSessionAsEntries(over transport: ContractTransport, seed: UInt64)
            async throws
        {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            try await run(over: transport, seed: seed, onDisk: false, redis: redis.endpoint)
        }

        private func run(
            over transport: ContractTransport, seed: UInt64, onDisk: Bool, redis: RedisEndpoint? = nil
        ) async throws {
            let reloadable = try ContractReloadableServer(over: transport, onDisk: onDisk, redis: redis)
            defer { reloadable.shutdown() }
            let client = reloadable.server.client()
            var rng = SplitMix64(state: 0x26_05 ^ seed &* 0x9E37_79B9_7F4A_7C15)
            var edits = MenuEdits(randomTree(nodes: 60, maxDepth: 4, using: &rng))
            #expect(try reloadable.reload(toJSON: menuJSON(edits.items)))
            for generation in 0 ..< 6 {
                let menu = try makeMenu(edits.items)
                let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
                var sessions: [(id: String, revision: Int, rows: [LiveJSON])] = []
                for _ in 0 ..< 3 {
                    let id = try await client.newSession()
                    for _ in 0 ..< Int.random(in: 0 ... 8, using: &rng) {
                        guard let group = groups.randomElement(using: &rng) else { break }
                        #expect(try await client.toggle(group, session: id).status == 200)
                    }
                    let revision = try await client.get("/count", session: id).decode(LiveRevision.self).revision
                    sessions.append((id, revision, try await rows(client, id)))
                }
                edits.applyRandom(Int.random(in: 1 ... 6, using: &rng), using: &rng)
                guard try reloadable.reload(toJSON: menuJSON(edits.items)) else { continue }
                let context =
                    "seed \(seed)\(onDisk ? " on disk" : ""), generation \(generation): \(edits.log.suffix(6).joined(separator: "; "))"
                for session in sessions {
                    let feed = try await client.get("/changes?since=\(session.revision)", session: session.id)
                        .decode(LiveChanges.self)
                    try #require(feed.changes.count == 1, "\(context)")
                    #expect(feed.revision == session.revision + 1)
                    let reload = try #require(feed.changes[0].reload, "\(context)")
                    let after = try await rows(client, session.id)
                    var applied = session.rows
                    for splice in reload.changes {
                        try #require(
                            splice.at + splice.removed <= applied.count && splice.at + splice.inserted <= after.count)
                        applied.replaceSubrange(
                            splice.at ..< splice.at + splice.removed,
                            with: after[splice.at ..< splice.at + splice.inserted])
                    }
                    for index in reload.reconfigured where index < applied.count { applied[index] = after[index] }
                    #expect(applied == after, "\(context)")
                }
            }
        }
    }
}
