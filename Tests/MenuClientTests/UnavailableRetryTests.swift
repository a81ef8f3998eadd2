// A server whose session store is briefly unreachable answers 503 `unavailable` with
// `Retry-After: 1` (issue 16: a shared Redis paused or failing over): MenuClient sends the request
// again with backoff instead of failing at once, and gives up with the server's error after its
// retries. The server is the real service on libmicrohttpd; its store refuses a set number of
// calls as unavailable and then serves.

import Foundation
import HTTPCore
import HTTPServer
import MenuClient
import MenuModel
import MenuService
import MenuSessions
import Synchronization
import Testing

/// The in-memory store, with the next ``refuseNext`` calls refused as `.unavailable`.
final class OutageSessionStore: SessionStore {
    let base: InMemorySessionStore
    private let refusals = Mutex(0)
    private let refused = Atomic(0)

    init(menu: Menu) { base = InMemorySessionStore(menu: menu) }

    /// Makes the next `count` store calls throw `.unavailable`.
    func refuseNext(_ count: Int) { refusals.withLock { $0 = count } }
    /// The calls refused so far.
    var refusedCalls: Int { refused.load(ordering: .relaxed) }

    private func gate() throws(SessionStoreError) {
        let refuse = refusals.withLock { left in
            guard left > 0 else { return false }
            left -= 1
            return true
        }
        guard refuse else { return }
        refused.add(1, ordering: .relaxed)
        throw .unavailable(reason: "Redis at 127.0.0.1:1 did not answer within 300 ms")
    }

    var currentMenu: MenuGeneration { base.currentMenu }
    func create(in menu: MenuGeneration, state: SessionState) throws(SessionStoreError) -> SessionID {
        try gate()
        return try base.create(in: menu, state: state)
    }
    func delete(_ id: SessionID) throws(SessionStoreError) {
        try gate()
        try base.delete(id)
    }
    func snapshot(of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> SessionSnapshot {
        try gate()
        return try base.snapshot(of: id, in: menu)
    }
    func apply(
        _ command: SessionCommand, to id: SessionID?, in menu: MenuGeneration,
        if condition: RevisionCondition?
    ) throws(SessionStoreError) -> AppliedChange {
        try gate()
        return try base.apply(command, to: id, in: menu, if: condition)
    }
    func changes(of id: SessionID, since: Int, in menu: MenuGeneration) throws(SessionStoreError) -> SessionChanges {
        try gate()
        return try base.changes(of: id, since: since, in: menu)
    }
    func adopt(_ menu: MenuGeneration) -> SessionRebaseReport { base.adopt(menu) }
}

/// The service over an ``OutageSessionStore`` on 127.0.0.1, a free port.
final class OutageServer: Sendable {
    let store: OutageSessionStore
    let http: HTTPServer

    init(config: String) throws {
        store = OutageSessionStore(menu: try Menu(jsonData: Data(config.utf8)))
        let service = MenuAPI(store: store)
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        http = try HTTPServer(
            configuration: configuration, handler: { service.respond(to: $0) }, rejection: { service.reject($0) })
    }

    func configuration(_ retry: MenuRetryPolicy) -> MenuClientConfiguration {
        MenuClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(http.port)")!, unavailableRetry: retry)
    }

    /// The session's revision and whether `group` is expanded, read from the store.
    func state(of session: String, _ group: String) throws -> (revision: Int, isExpanded: Bool) {
        let snapshot = try store.base.snapshot(of: try #require(SessionID(session)))
        let menu = store.base.currentMenu.menu
        let view = FlattenedView(menu: menu, state: snapshot.state)
        return (snapshot.revision, view.isExpanded(try #require(menu.node(withID: group))))
    }

    func shutdown() { http.shutdown(gracePeriod: .seconds(2)) }
}

@Suite(.timeLimit(.minutes(10))) struct UnavailableRetryTests {
    static let quick = MenuRetryPolicy(retries: 3, initialBackoff: 0.01, maxBackoff: 0.05)

    @Test func aWriteAnswered503IsSentAgainUntilTheStoreServesAndIsAppliedOnce() async throws {
        let server = try OutageServer(config: ClientTestMenus.large(groups: 3, subgroups: 3, leaves: 4))
        defer { server.shutdown() }
        let session = MenuSession(configuration: server.configuration(Self.quick))
        let table = try await MenuTable(session: session)
        _ = try await table.rows(in: 0 ..< table.count)
        server.store.refuseNext(3)  // the first send and two retries of the toggle
        let update = try await table.toggle("g1")
        #expect(server.store.refusedCalls == 3)
        #expect(update.changes.map(\.splice.removed) == [8] && table.revision == 1)
        let state = try server.state(of: try #require(await session.id), "g1")
        #expect(state.revision == 1 && !state.isExpanded, "applied exactly once")
    }

    @Test func aReadAnswered503IsSentAgainToo() async throws {
        let server = try OutageServer(config: ClientTestMenus.large(groups: 3, subgroups: 3, leaves: 4))
        defer { server.shutdown() }
        let session = MenuSession(configuration: server.configuration(Self.quick))
        _ = try await session.ensureID()
        server.store.refuseNext(2)
        let layout = try await session.refreshLayout()
        #expect(server.store.refusedCalls == 2 && layout != nil)
    }

    @Test func afterItsRetriesTheClientThrowsTheServers503AndNothingWasApplied() async throws {
        let server = try OutageServer(config: ClientTestMenus.large(groups: 3, subgroups: 3, leaves: 4))
        defer { server.shutdown() }
        let session = MenuSession(
            configuration: server.configuration(MenuRetryPolicy(retries: 2, initialBackoff: 0.01, maxBackoff: 0.05)))
        let table = try await MenuTable(session: session)
        _ = try await table.rows(in: 0 ..< table.count)
        server.store.refuseNext(100)
        do {
            try await table.toggle("g1")
            Issue.record("the toggle succeeded while the store refused every call")
        } catch {
            #expect(error.code == "unavailable")
            if case .server(let status, _, _, _, _, let retryAfter) = error {
                #expect(status == 503 && retryAfter == 1)
            }
        }
        #expect(server.store.refusedCalls == 3, "one send and two retries")
        server.store.refuseNext(0)
        #expect(try server.state(of: try #require(await session.id), "g1").revision == 0)
    }

    @Test func aRetryWaitsAtLeastWhatRetryAfterSaysUpToTheCap() async throws {
        let server = try OutageServer(config: ClientTestMenus.large(groups: 2, subgroups: 2, leaves: 2))
        defer { server.shutdown() }
        let session = MenuSession(
            configuration: server.configuration(MenuRetryPolicy(retries: 1, initialBackoff: 0.01, maxBackoff: 2)))
        _ = try await session.ensureID()
        server.store.refuseNext(1)
        let started = ContinuousClock.now
        _ = try await session.refreshLayout()
        // A lower bound only: the server's Retry-After: 1 was waited out before the second send.
        #expect(ContinuousClock.now - started >= .seconds(1))
        #expect(server.store.refusedCalls == 1)
    }
}
