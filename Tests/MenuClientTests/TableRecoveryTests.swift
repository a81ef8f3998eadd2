// What the server changes under a table: a menu reload (its splices and renamed rows applied,
// with sessions in memory, on disk or in Redis; with no reload entries, every row dropped,
// reported with both versions), a session it no longer has (recreated from its layout,
// reported), a restart.

import Foundation
import MenuClient
import MenuTestSupport
import RedisTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(10))) struct TableRecoveryTests {
    private let menu = ClientTestMenus.large(groups: 4, subgroups: 3, leaves: 4)

    @Test(arguments: ["memory", "disk", "redis"])
    func aMenuReloadOnTheServerReachesTheTableAsSplicesAndReconfiguredRows(store: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let redis = store == "redis" ? try RedisServerProcess() : nil
        defer { redis?.stop() }
        let server = try ClientTestServer(
            config: menu, dataDirectory: store == "disk" ? directory.path : nil, redis: redis?.endpoint)
        defer { server.shutdown() }
        let table = try await MenuTable(session: MenuSession(configuration: server.configuration))
        try await table.toggle("g1")
        let before = try await table.rows(in: 0 ..< table.count)
        let old = table.version
        // One more top-level group, every title new: a splice, and every kept row reconfigured.
        try server.reload(with: ClientTestMenus.large(groups: 5, subgroups: 3, leaves: 4, tag: "@2"))
        let events = try await table.sync()
        let new = table.version
        #expect(new != old && table.revision == 2)
        let changes = events.compactMap { if case .changed(let change) = $0 { change } else { nil } }
        #expect(changes.count == events.count, "no reload of the whole table: \(events)")
        let spliced = changes.dropLast()
        #expect(spliced.reduce(before.count) { $0 + $1.splice.inserted - $1.splice.removed } == table.count)
        #expect(spliced.allSatisfy { $0.reconfiguredRows.isEmpty } && spliced.count >= 1)
        let renamed = try #require(changes.last)
        #expect(renamed.splice == MenuSplice(at: table.count, inserted: 0, removed: 0))
        #expect(table.cachedRows.contains { $0 != nil }, "the rows the reload kept as they were stay cached")
        try await expectCacheMatchesServer(table, server: server, "the rows kept")
        // The session's layout carried over on the server (g1 stays collapsed); the rows are the new menu's.
        let rows = try await table.rows(in: 0 ..< table.count)
        #expect(rows.contains { $0.title.hasSuffix("@2") } && rows.first { $0.id == "g1" }?.isExpanded == false)
        let oldRows = Dictionary(uniqueKeysWithValues: before.map { ($0.id, $0) })
        // Kept rows whose title changed, or whose place among their siblings did (the new
        // top-level group makes five where there were four).
        let changedRows = rows.indices.filter { index in
            guard let old = oldRows[rows[index].id] else { return false }
            return rows[index].title.hasSuffix("@2")
                || (old.posInSet, old.setSize) != (rows[index].posInSet, rows[index].setSize)
        }
        #expect(changedRows.contains { !rows[$0].title.hasSuffix("@2") }, "a row reconfigured for its place alone")
        #expect(renamed.reconfiguredRows == changedRows, "exactly the kept rows whose title or place changed")
        try await expectCacheMatchesServer(table, server: server, "after the reload")
    }

    @Test func aMenuReloadWithoutReloadEntriesDropsTheCacheAndIsReportedWithBothVersions() async throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        // No previous menu kept: Redis's sessions keep their revision, their feed has no entry.
        let server = try ClientTestServer(config: menu, redis: redis.endpoint, reloadEntryWindow: 0)
        defer { server.shutdown() }
        let table = try await MenuTable(session: MenuSession(configuration: server.configuration))
        try await table.toggle("g1")
        _ = try await table.rows(in: 0 ..< table.count)
        let old = table.version
        try server.reload(with: ClientTestMenus.large(groups: 4, subgroups: 3, leaves: 4, tag: "@2"))
        let events = try await table.sync()
        let new = table.version
        #expect(new != old)
        #expect(events == [.reloaded(version: new, count: table.count, reason: .menuChanged(from: old, to: new))])
        #expect(table.cachedRows.allSatisfy { $0 == nil })
        try await expectCacheMatchesServer(table, server: server, "after the reload")
    }

    @Test func twoMenuReloadsBetweenTwoSyncsDropTheCacheAsHistoryGone() async throws {
        let server = try ClientTestServer(config: menu)
        defer { server.shutdown() }
        let table = try await MenuTable(session: MenuSession(configuration: server.configuration))
        try await table.toggle("g1")
        _ = try await table.rows(in: 0 ..< table.count)
        try server.reload(with: ClientTestMenus.large(groups: 4, subgroups: 3, leaves: 4, tag: "@2"))
        try server.reload(with: ClientTestMenus.large(groups: 4, subgroups: 3, leaves: 4, tag: "@3"))
        let events = try await table.sync()
        #expect(events == [.reloaded(version: table.version, count: table.count, reason: .historyGone)], "\(events)")
        try await expectCacheMatchesServer(table, server: server, "after the reloads")
    }

    @Test func aWriteJustAfterAReloadItHasNotSeenReloadsTheTableThenAppliesItsPut() async throws {
        let server = try ClientTestServer(config: menu)
        defer { server.shutdown() }
        let table = try await MenuTable(session: MenuSession(configuration: server.configuration))
        _ = try await table.rows(in: 0 ..< table.count)
        let old = table.version
        try server.reload(with: ClientTestMenus.large(groups: 4, subgroups: 3, leaves: 4, tag: "@3"))
        // Its If-Match names the old menu (412); the feed then has the reload's entry (every row
        // renamed), then the PUT.
        let update = try await table.setExpanded("g2", false)
        #expect(update.events.allSatisfy { if case .changed = $0 { true } else { false } }, "\(update.events)")
        #expect(table.version != old)
        #expect(update.changes.count == 2, "the renames, then the write: \(update.changes)")
        #expect(update.changes.first?.reconfiguredRows.isEmpty == false)
        #expect(update.changes.last?.splice.removed == 8)
        #expect(try await table.rows(in: 0 ..< table.count).first { $0.id == "g2" }?.isExpanded == false)
        try await expectCacheMatchesServer(table, server: server, "after the write")
    }

    @Test func aRestoredSessionTheServerNeverHadIsReplacedWhenTheTableOpens() async throws {
        let server = try ClientTestServer(config: menu)
        defer { server.shutdown() }
        let unknown = "AAAAAAAAAAAAAAAAAAAAAA"
        let session = MenuSession(
            configuration: server.configuration, restoring: MenuSessionSnapshot(sessionID: unknown, layout: nil))
        let table = try await MenuTable(session: session)
        var events = table.events.makeAsyncIterator()
        guard case .sessionRecreated(let recreation)? = await events.next() else {
            Issue.record("expected the session to be recreated")
            return
        }
        let newID = try #require(await session.id)
        #expect(recreation.oldID == unknown && recreation.newID == newID && !recreation.layoutRestored)
        _ = try await table.rows(in: 0 ..< table.count)
        try await expectCacheMatchesServer(table, server: server, "after opening")
    }

    @Test func aSessionTheServerNoLongerHasIsRecreatedFromItsLayoutAndReported() async throws {
        let server = try ClientTestServer(config: menu)
        defer { server.shutdown() }
        let session = MenuSession(configuration: server.configuration)
        let table = try await MenuTable(session: session)
        try await table.toggle("g0")
        try await table.setExpanded("s1-1", true)
        _ = try await table.rows(in: 0 ..< table.count)
        let layoutBefore = try await server.freshTable(sessionID: try #require(await session.id)).rows
        let oldID = try #require(await session.id)
        var delete = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/session")!)
        delete.httpMethod = "DELETE"
        delete.setValue(oldID, forHTTPHeaderField: "X-Session-Id")
        _ = try await URLSession.shared.data(for: delete)
        // The next write finds the session gone: a new one from the layout, the table read again, then the write.
        let update = try await table.setExpanded("g3", false)
        let newID = try #require(await session.id)
        #expect(newID != oldID)
        guard case .sessionRecreated(let recreation)? = update.events.first else {
            Issue.record("expected the session to be recreated first, got \(update.events)")
            return
        }
        #expect(
            recreation.oldID == oldID && recreation.newID == newID && recreation.layoutRestored
                && recreation.ignored.isEmpty)
        #expect(
            update.events.dropFirst().first
                == .reloaded(version: table.version, count: layoutBefore.count, reason: .sessionRecreated))
        #expect(update.changes.count == 1)
        let rows = try await table.rows(in: 0 ..< table.count)
        #expect(rows.first { $0.id == "g0" }?.isExpanded == false && rows.first { $0.id == "s1-1" }?.isExpanded == true)
        try await expectCacheMatchesServer(table, server: server, "after the recreation")
    }

    @Test func aServerRestartedWithoutADataDirectoryHasForgottenTheSessionAndTheClientRestoresItsLayout() async throws {
        var server = try ClientTestServer(config: menu)
        defer { server.shutdown() }
        let session = MenuSession(configuration: server.configuration)
        let table = try await MenuTable(session: session)
        // A layout with every part of the portable state: a base, a mark, flips.
        try await table.setAll(.collapsed)
        try await table.setExpanded("g1", true, recursive: true)
        try await table.setExpanded("s1-2", false)
        try await table.reveal("m3-1")
        let layout = try #require(await session.layout)
        #expect(layout.base == .collapsed && layout.marks.map(\.id) == ["g1"] && layout.collapsedIDs == ["s1-2"])
        let before = try await server.freshTable(sessionID: try #require(await session.id)).rows
        server = try server.restarted()
        let events = try await table.sync()
        guard case .sessionRecreated(let recreation)? = events.first else {
            Issue.record("expected the session to be recreated, got \(events)")
            return
        }
        #expect(recreation.layoutRestored && recreation.ignored.isEmpty)
        #expect(try await table.rows(in: 0 ..< table.count) == before)
        try await expectCacheMatchesServer(table, server: server, "after the restart")
    }
}
