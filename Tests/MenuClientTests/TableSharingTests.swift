// Two devices on one session: each catches up from the changes feed, a stale write is retried as
// the PUT it meant (never a second toggle), and revalidation is a 304 when nothing changed.

import Foundation
import MenuClient
import MenuTestSupport
import Testing

@testable import MenuClient

@Suite(.timeLimit(.minutes(10))) struct TableSharingTests {
    /// Two tables on one session, as two devices of one user.
    private func twoDevices(_ server: ClientTestServer, pageSize: Int = 50) async throws -> (MenuTable, MenuTable) {
        let phone = try await MenuTable(session: MenuSession(configuration: server.configuration), pageSize: pageSize)
        let id = try #require(await phone.session.id)
        let tablet = try await MenuTable(
            session: MenuSession(
                configuration: server.configuration,
                restoring: MenuSessionSnapshot(sessionID: id, layout: nil)),
            pageSize: pageSize)
        return (phone, tablet)
    }

    @Test func aToggleFromAStaleDeviceBecomesThePutOfTheStateItMeantAfterCatchingUp() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 3, subgroups: 3, leaves: 4))
        defer { server.shutdown() }
        let (phone, tablet) = try await twoDevices(server)
        _ = try await phone.rows(in: 0 ..< phone.count)
        _ = try await tablet.rows(in: 0 ..< tablet.count)
        #expect(tablet.row(at: 0)?.id == "g0" && tablet.row(at: 0)?.isExpanded == true)
        let collapse = try await phone.toggle("g0")
        #expect(collapse.changes.map(\.splice.removed) == [8])
        // The tablet still shows g0 expanded: its toggle means "collapse". Its If-Match fails, it
        // catches up (the phone's splice), then PUTs collapsed, which changes nothing more.
        let stale = try await tablet.toggle("g0")
        #expect(stale.changes.map(\.splice) == [MenuSplice(at: 1, inserted: 0, removed: 8)])
        #expect(tablet.revision == 1)
        // The feed says where rows moved, not which group changed: the group's row was dropped and is read again.
        #expect(try await tablet.rows(in: 0 ..< 1).first?.isExpanded == false)
        let fresh = try await server.freshTable(sessionID: try #require(await phone.session.id))
        #expect(fresh.revision == 1 && fresh.rows[0].isExpanded == false)
        try await expectCacheMatchesServer(tablet, server: server, "the tablet after its stale toggle")
        #expect(try await phone.sync().isEmpty)
        try await expectCacheMatchesServer(phone, server: server, "the phone")
    }

    @Test func twoDevicesWritingInTurnStayConsistentWithTheServerAndEachOther() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 6, subgroups: 5, leaves: 6))
        defer { server.shutdown() }
        let (phone, tablet) = try await twoDevices(server, pageSize: 30)
        let ids = ClientTestMenus.ids(groups: 6, subgroups: 5, leaves: 6)
        var random = ClientTestRandom(state: 2)
        var remoteSplices = 0
        var refusedToggles = 0
        for step in 0 ..< 60 {
            let (writer, other) = Bool.random(using: &random) ? (phone, tablet) : (tablet, phone)
            for table in [phone, tablet] where table.count > 0 {
                let start = Int.random(in: 0 ..< table.count, using: &random)
                _ = try await table.rows(in: start ..< min(table.count, start + 40))
            }
            let group = ids.groups.randomElement(using: &random)!
            if Bool.random(using: &random) {
                do {
                    try await writer.toggle(group)
                } catch {
                    // A hidden group toggled from a stale device: refused, nothing applied blindly.
                    guard case .conflict = error else { throw error }
                    refusedToggles += 1
                }
            } else {
                try await writer.setExpanded(
                    group, Bool.random(using: &random), recursive: Int.random(in: 0 ..< 3, using: &random) == 0)
            }
            try await expectCacheMatchesServer(writer, server: server, "step \(step): the writer")
            if Int.random(in: 0 ..< 3, using: &random) == 0 {
                remoteSplices += try await other.sync().count { if case .changed = $0 { true } else { false } }
                try await expectCacheMatchesServer(
                    other, server: server, "step \(step): the other device after its sync")
                #expect(phone.cachedRows.count == tablet.cachedRows.count)
            }
        }
        #expect(remoteSplices > 10 && refusedToggles < 10)
    }

    @Test func revalidationSendsIfNoneMatchAndURLSessionHandsBackThe304() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 2, subgroups: 2, leaves: 2))
        defer { server.shutdown() }
        let table = try await MenuTable(session: MenuSession(configuration: server.configuration))
        let tag = MenuHTTP.entityTag(version: table.version, revision: table.revision)
        let (unchanged, _) = try await table.session.send("GET", "count", headers: [("If-None-Match", tag)])
        #expect(unchanged.status == 304 && unchanged.body.isEmpty && unchanged.headers["etag"] == tag)
        #expect(try await table.sync().isEmpty)
        try await table.toggle("g1")
        let (changed, _) = try await table.session.send("GET", "count", headers: [("If-None-Match", tag)])
        #expect(changed.status == 200)
        #expect(try await table.sync().isEmpty)
    }
}
