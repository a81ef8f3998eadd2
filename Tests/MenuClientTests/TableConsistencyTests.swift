// MenuTable against the real server: after every operation of a long random sequence the cache
// is what a fresh full read of the table shows, and it keeps the rows a write did not touch.

import Foundation
import MenuClient
import MenuTestSupport
import Testing

/// A seeded generator (SplitMix64), so that a failing sequence can be replayed.
struct ClientTestRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite(.timeLimit(.minutes(10))) struct TableConsistencyTests {
    @Test func theCacheEqualsAFreshFullReadAfterEveryStepOfALongRandomSequence() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large())
        defer { server.shutdown() }
        let ids = ClientTestMenus.ids()
        let table = try await MenuTable(
            session: MenuSession(configuration: server.configuration), pageSize: 40, prefetchPages: 1)
        var random = ClientTestRandom(state: 14)
        var keptAcrossWrites = 0
        var splices = 0
        var replacements = 0
        for step in 0 ..< 160 {
            if table.count > 0 {
                let start = Int.random(in: 0 ..< table.count, using: &random)
                _ = try await table.rows(
                    in: start ..< min(table.count, start + Int.random(in: 1 ... 90, using: &random)))
                _ = table.row(at: Int.random(in: 0 ..< table.count, using: &random))  // a background prefetch, racing the write
            }
            let before = table.cachedRows.compactMap { $0 }.count
            let update: MenuTableUpdate
            let operation: String
            switch Int.random(in: 0 ..< 20, using: &random) {
            case 0 ..< 9:
                let group = ids.groups.randomElement(using: &random)!
                operation = "toggle \(group)"
                update = try await table.toggle(group)
            case 9 ..< 16:
                let group = ids.groups.randomElement(using: &random)!
                let (isExpanded, recursive) = (Bool.random(using: &random), Bool.random(using: &random))
                operation = "set \(group) \(isExpanded)\(recursive ? " recursive" : "")"
                update = try await table.setExpanded(group, isExpanded, recursive: recursive)
            case 16 ..< 19:
                let row = ids.rows.randomElement(using: &random)!
                operation = "reveal \(row)"
                update = try await table.reveal(row)
                if let index = update.index {
                    #expect(table.row(at: index)?.id ?? row == row, "step \(step): \(operation)")
                }
            default:
                let mode = [MenuExpansionMode.expanded, .collapsed, .default].randomElement(using: &random)!
                operation = "all \(mode)"
                update = try await table.setAll(mode)
            }
            splices += update.changes.count
            replacements += update.changes.count { $0.splice.removed > 0 && $0.splice.inserted > 0 }
            if !update.changes.isEmpty, before > 0 {
                keptAcrossWrites += table.cachedRows.compactMap { $0 }.count > 0 ? 1 : 0
            }
            for change in update.changes {
                #expect(
                    change.deletedIndexPaths.count == change.splice.removed
                        && change.insertedIndexPaths.count == change.splice.inserted)
            }
            try await expectCacheMatchesServer(table, server: server, "step \(step): \(operation)")
        }
        // The sequence did move rows, and the cache kept rows through the writes instead of refetching everything.
        #expect(splices > 60 && replacements > 3)
        #expect(keptAcrossWrites > 40)
        // Filling the whole table at the end gives exactly the fresh read.
        let all = try await table.rows(in: 0 ..< table.count)
        let fresh = try await server.freshTable(sessionID: try #require(await table.session.id))
        #expect(all == fresh.rows)
    }

    @Test func rowsOfOnePageAskedForConcurrentlyComeFromOneFetchAndAgree() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 3, subgroups: 3, leaves: 5))
        defer { server.shutdown() }
        // Through a proxy that drops nothing, to count the requests.
        let proxy = try LossyProxy(upstreamPort: server.port, dropAnswersTo: "", times: 0)
        defer { proxy.stop() }
        let configuration = MenuClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(proxy.port)")!)
        let table = try await MenuTable(
            session: MenuSession(configuration: configuration), pageSize: 25, prefetchPages: 0)
        let results = try await withThrowingTaskGroup(of: [MenuRow].self) { group in
            for start in 0 ..< 8 { group.addTask { try await table.rows(in: start ..< start + 10) } }
            var all: [[MenuRow]] = []
            for try await rows in group { all.append(rows) }
            return all
        }
        #expect(results.count == 8 && results.allSatisfy { $0.count == 10 })
        #expect(proxy.requests.filter { $0.hasPrefix("GET /rows") } == ["GET /rows?offset=0&limit=25 HTTP/1.1"])
        // One page was asked for; the rows beyond it are still placeholders (prefetch 0).
        let cached = table.cachedRows
        #expect(cached[0 ..< 25].allSatisfy { $0 != nil } && cached[25...].allSatisfy { $0 == nil })
        try await expectCacheMatchesServer(table, server: server, "after the concurrent reads")
    }

    @Test func rowAtAnswersNilThenFetchesItsPageAndTheNeighbouringOnes() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 6, subgroups: 4, leaves: 6))
        defer { server.shutdown() }
        let table = try await MenuTable(
            session: MenuSession(configuration: server.configuration), pageSize: 10, prefetchPages: 2)
        var loaded = table.events.makeAsyncIterator()
        #expect(table.row(at: 55) == nil)
        var rowsLoaded: [Range<Int>] = []
        while rowsLoaded.count < 5, let event = await loaded.next() {
            if case .rowsLoaded(let rows, _) = event { rowsLoaded.append(rows) }
        }
        #expect(Set(rowsLoaded.map(\.lowerBound)) == [30, 40, 50, 60, 70])
        #expect(table.row(at: 55)?.index == 55)
        let cached = table.cachedRows
        #expect(cached.count == 114 && cached[30 ..< 80].allSatisfy { $0 != nil })
        #expect(cached[0 ..< 30].allSatisfy { $0 == nil } && cached[80...].allSatisfy { $0 == nil })
        try await expectCacheMatchesServer(table, server: server, "after the prefetch")
    }
}
