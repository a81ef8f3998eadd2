// Changes that reach a table by themselves: a second device's table follows the session through
// long polls of the changes feed, with no call of its own.

import Foundation
import MenuClient
import MenuTestSupport
import Testing

@testable import MenuClient

@Suite(.timeLimit(.minutes(2))) struct LiveChangesTests {
    /// Two tables on one session, as two devices of one user, and the session's id.
    private func twoDevices(_ server: ClientTestServer) async throws -> (MenuTable, MenuTable, String) {
        let phone = try await MenuTable(session: MenuSession(configuration: server.configuration))
        let id = try #require(await phone.session.id)
        let tablet = try await MenuTable(
            session: MenuSession(
                configuration: server.configuration, restoring: MenuSessionSnapshot(sessionID: id, layout: nil)))
        return (phone, tablet, id)
    }

    @Test func aTableFollowingLiveChangesShowsAnotherDevicesWritesWithNoCallOfItsOwn() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 3, subgroups: 3, leaves: 4))
        defer { server.shutdown() }
        let (phone, tablet, _) = try await twoDevices(server)
        _ = try await tablet.rows(in: 0 ..< tablet.count)
        let before = tablet.count
        var live = tablet.liveChanges().makeAsyncIterator()
        // The phone collapses g0 (8 rows under it) and expands it again: the tablet hears both.
        _ = try await phone.toggle("g0")
        var heard: [MenuTableChange] = []
        while heard.count < 1, let events = await live.next() {
            heard += events.compactMap { if case .changed(let change) = $0 { change } else { nil } }
        }
        #expect(heard.map(\.splice) == [MenuSplice(at: 1, inserted: 0, removed: 8)])
        #expect(tablet.revision == 1 && tablet.count == before - 8)
        _ = try await phone.toggle("g0")
        while heard.count < 2, let events = await live.next() {
            heard += events.compactMap { if case .changed(let change) = $0 { change } else { nil } }
        }
        #expect(heard.last?.splice == MenuSplice(at: 1, inserted: 8, removed: 0))
        #expect(tablet.revision == 2 && tablet.count == before)
        try await expectCacheMatchesServer(tablet, server: server, "the tablet after following the phone")
    }

    @Test func aDeletedSessionIsRecreatedAndTheTableReloaded() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 2, subgroups: 2, leaves: 2))
        defer { server.shutdown() }
        let (phone, tablet, id) = try await twoDevices(server)
        var live = tablet.liveChanges().makeAsyncIterator()
        try await phone.session.delete()
        let events = await live.next() ?? []
        #expect(
            events.contains { if case .reloaded(_, _, .sessionRecreated) = $0 { true } else { false } }, "\(events)")
        #expect(await tablet.session.id != id)
    }
}
