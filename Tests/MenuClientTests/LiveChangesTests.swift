// Changes that reach a table by themselves: a second device's table follows the session through
// the changes feed as an event stream (long polls where nothing streams), with no call of its own.

import Foundation
import HTTPTestSupport
import MenuApp
import MenuAvailability
import MenuClient
import MenuService
import MenuTestSupport
import Testing

@testable import MenuClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(10))) struct LiveChangesTests {
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

    /// The server's figure `name` from `GET /metrics`.
    private func metric(_ name: String, _ server: ClientTestServer) async throws -> Double? {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.port)/metrics")!)
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    /// The next `.changed` or `.reloaded` events from `live`, at least `count` of them.
    private func hear(_ count: Int, from live: inout AsyncStream<[MenuTableEvent]>.Iterator) async -> [MenuTableEvent] {
        var heard: [MenuTableEvent] = []
        while heard.count < count, let events = await live.next() {
            heard += events.filter {
                switch $0 {
                case .changed, .reloaded: true
                default: false
                }
            }
        }
        return heard
    }

    @Test func theTableFollowsThroughAnEventStreamAndSkipsItsOwnWritesWhenTheyComeBack() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 3, subgroups: 3, leaves: 4))
        defer { server.shutdown() }
        let (phone, tablet, _) = try await twoDevices(server)
        var live = tablet.liveChanges().makeAsyncIterator()
        _ = try await phone.toggle("g0")
        #expect(await hear(1, from: &live).count == 1)
        #expect(try await metric("menu_event_streams_open", server) == 1, "the tablet follows a stream")
        #expect(try await metric("menu_streams_open", server) == 1, "and no long poll")
        // The tablet's own write comes back on its stream: it is not applied twice.
        _ = try await tablet.toggle("g1")
        _ = try await phone.toggle("g2")
        let heard = await hear(1, from: &live)
        #expect(heard.count == 1 && tablet.revision == 3, "\(heard)")
        try await expectCacheMatchesServer(tablet, server: server, "the tablet after its own write and the phone's")
    }

    @Test func whereNothingStreamsTheTableFallsBackToLongPolls() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 2, subgroups: 2, leaves: 3))
        defer { server.shutdown() }
        // A proxy that answers a stream request with the plain feed, as a server without streams would.
        let plain = Array(#"{"version":"x","revision":0,"changes":[]}"#.utf8)
        let proxy = try HTTPTestProxy(upstreamPort: server.port) { line in
            guard line.hasPrefix("GET /changes?"), !line.contains("wait=") else { return .forward }
            return .answer(
                Array(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(plain.count)\r\n\r\n".utf8)
                    + plain)
        }
        defer { proxy.stop() }
        let phone = try await MenuTable(session: MenuSession(configuration: server.configuration))
        let id = try #require(await phone.session.id)
        let behindProxy = MenuClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(proxy.port)")!)
        let tablet = try await MenuTable(
            session: MenuSession(configuration: behindProxy, restoring: MenuSessionSnapshot(sessionID: id, layout: nil))
        )
        var live = tablet.liveChanges().makeAsyncIterator()
        _ = try await phone.toggle("g0")
        #expect(await hear(1, from: &live).count == 1)
        #expect(tablet.revision == 1)
        #expect(proxy.requests.contains { $0.contains("wait=") }, "\(proxy.requests)")
    }

    @Test func aMenuReloadReachesAFollowingTableAsItsSplices() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 2, subgroups: 2, leaves: 3))
        defer { server.shutdown() }
        let (_, tablet, _) = try await twoDevices(server)
        var live = tablet.liveChanges().makeAsyncIterator()
        let before = tablet.version
        let revision = tablet.revision
        #expect(try await eventuallyAsync { try await metric("menu_event_streams_open", server) == 1 })
        try server.reload(with: ClientTestMenus.large(groups: 3, subgroups: 2, leaves: 3))
        let heard = await hear(1, from: &live)
        #expect(!heard.isEmpty && heard.allSatisfy { if case .changed = $0 { true } else { false } }, "\(heard)")
        #expect(tablet.revision == revision + 1)
        #expect(tablet.version != before)
        try await expectCacheMatchesServer(tablet, server: server, "the tablet after the reload")
    }

    @Test func aReloadAddingOneDishIsOneInsertOnEveryFollowingTable() async throws {
        let menu = ClientTestMenus.large(groups: 2, subgroups: 2, leaves: 3)
        let server = try ClientTestServer(config: menu)
        defer { server.shutdown() }
        // Three tables: two devices on one session, and another session with g1 collapsed.
        let (phone, tablet, _) = try await twoDevices(server)
        let other = try await MenuTable(session: MenuSession(configuration: server.configuration))
        try await other.toggle("g1")
        var follows: [AsyncStream<[MenuTableEvent]>.Iterator] = []
        for table in [phone, tablet, other] {
            _ = try await table.rows(in: 0 ..< table.count)
            follows.append(table.liveChanges().makeAsyncIterator())
        }
        #expect(try await eventuallyAsync { try await metric("menu_event_streams_open", server) == 3 })
        let counts = [phone.count, tablet.count, other.count]
        // A dish before r0-0-0, in s0-0 (open by default, as g0 is): row 2 in every table.
        let dish = #"{"id":"new-dish","title":"New dish"},"#
        try server.reload(with: menu.replacingOccurrences(of: #"{"id":"r0-0-0""#, with: dish + #"{"id":"r0-0-0""#))
        for (index, table) in [phone, tablet, other].enumerated() {
            let heard = await hear(1, from: &follows[index])
            let changes = heard.compactMap { if case .changed(let change) = $0 { change } else { nil } }
            #expect(changes.count == heard.count, "no reload of the table: \(heard)")
            let splices = changes.map(\.splice).filter { $0.inserted > 0 || $0.removed > 0 }
            #expect(splices == [MenuSplice(at: 2, inserted: 1, removed: 0)], "\(heard)")  // after g0, s0-0
            #expect(table.count == counts[index] + 1)
            try await expectCacheMatchesServer(table, server: server, "table \(index) after the reload")
        }
    }

    /// A dish sold out through the server's availability (issue 27 §4): a following table hears
    /// it as a `.changed` whose reconfigured rows are the dish's (an empty splice, the session's
    /// revision unchanged), and reads that row again with its availability; a table that only
    /// syncs gets the same from the feed, and clearing it comes through the same way.
    @Test func aSoldOutDishReachesTheTablesAsItsReconfiguredRow() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 3, subgroups: 3, leaves: 4))
        defer { server.shutdown() }
        let (phone, tablet, _) = try await twoDevices(server)
        let rows = try await tablet.rows(in: 0 ..< tablet.count)
        _ = try await phone.rows(in: 0 ..< phone.count)
        let dish = try #require(rows.last { !$0.isGroup })
        var live = tablet.liveChanges().makeAsyncIterator()
        #expect(try await eventuallyAsync { try await metric("menu_event_streams_open", server) == 1 })
        let revision = tablet.revision
        _ = try server.server.service.updateAvailability(
            [.init(id: dish.id, Availability(state: .soldOut, reason: "none left"))])
        let heard = await hear(1, from: &live)
        #expect(
            heard == [
                .changed(
                    MenuTableChange(
                        splice: MenuSplice(at: tablet.count, inserted: 0, removed: 0), count: tablet.count,
                        revision: revision, section: 0, reconfiguredRows: [dish.index]))
            ], "\(heard)")
        #expect(tablet.row(at: dish.index) == nil, "dropped to a placeholder")
        let again = try await tablet.rows(in: dish.index ..< dish.index + 1)
        #expect(again.first?.availability == MenuRowAvailability(state: .soldOut, reason: "none left"))
        #expect(tablet.revision == revision)

        // The phone does not follow: its sync finds the same in the feed.
        let synced = try await phone.sync()
        #expect(
            synced.contains {
                if case .changed(let change) = $0 { change.reconfiguredRows == [dish.index] } else { false }
            })
        #expect(try await phone.rows(in: dish.index ..< dish.index + 1).first?.availability?.state == .soldOut)

        _ = try server.server.service.updateAvailability([.init(id: dish.id, Availability(state: .available))])
        _ = await hear(1, from: &live)
        #expect(try await tablet.rows(in: dish.index ..< dish.index + 1).first?.availability == nil)
        try await expectCacheMatchesServer(tablet, server: server, "the tablet after availability changes")
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

/// Polls `condition` (bounded: 10 s) on the task's own schedule, never blocking a thread.
private func eventuallyAsync(_ condition: () async throws -> Bool) async throws -> Bool {
    for _ in 0 ..< 200 {
        if try await condition() { return true }
        try await Task.sleep(nanoseconds: 50_000_000)
    }
    return try await condition()
}
