// The session store contract written once and run against every store: the in-memory store, the
// durable store and the Redis store (with its tracking cache and without). A store passes when it
// answers as the others do.

import DurableTestSupport
import MenuModel
import MenuSessions
import MenuTestSupport
import NaiveReference
import Testing

@Suite("Session stores: the contract every store keeps", .serialized)
struct SessionStoreConformanceTests {
    @Test("the revision rules and conditional writes", arguments: StoreKind.allCases)
    func revisionsFollowTheRulesAndAConditionalWriteIsCheckedWithIt(kind: StoreKind) throws {
        let subject = try StoreUnderTest(kind, menu: try storeTestMenu())
        defer { subject.stop() }
        #expect(
            RevisionScenario.trail(
                of: subject.store, parent: "a", child: "b",
                reloadingTo: try makeMenu([
                    .group("a", expanded: true, [.row("a1"), .group("b", expanded: false, [.row("b1")])]),
                    .group("c", expanded: true, [.row("c1"), .row("c2"), .row("c3")])
                ])) == RevisionScenario.expectedTrail(of: subject.store))
    }

    /// A read looks for the revision its client knows (`If-None-Match`) only for a store whose
    /// copies another instance may have written past: the Redis store, cached or not.
    @Test("only a store of copies refreshes them", arguments: StoreKind.allCases)
    func onlyAStoreOfCopiesRefreshesThem(kind: StoreKind) throws {
        let subject = try StoreUnderTest(kind, menu: try storeTestMenu())
        defer { subject.stop() }
        #expect(subject.store.refreshesCopies == (kind == .redis || kind == .redisUncached))
    }

    @Test("create, read, write, changes, delete", arguments: StoreKind.allCases)
    func aSessionLivesFromCreationToDeletion(kind: StoreKind) throws {
        let menu = try storeTestMenu()
        let subject = try StoreUnderTest(kind, menu: menu)
        defer { subject.stop() }
        let store = subject.store
        let id = try store.create()
        #expect(try store.snapshot(of: id) == SessionSnapshot(state: SessionState(), revision: 0))
        let collapsed = try store.apply(.toggle(groupID: "a"), to: id)
        #expect(collapsed.revision == 1 && collapsed.change.splice == RowChange(at: 1, inserted: 0, removed: 2))
        let hidden = try store.apply(.toggle(groupID: "b"), to: id)  // inside collapsed a: no row changes
        #expect(hidden.revision == 2 && hidden.change.splice == nil)
        #expect(try store.snapshot(of: id).state == hidden.state)
        #expect(expandedGroups(try store.state(of: id), on: menu) == ["b", "c", "e"])
        let changes = try store.changes(of: id, since: 0, in: store.currentMenu)
        #expect(changes.revision == 2 && changes.entries?.map(\.revision) == [1, 2])
        #expect(changes.entries?.map(\.change) == [RowChange(at: 1, inserted: 0, removed: 2), nil])
        #expect(try store.changes(of: id, since: 2, in: store.currentMenu).entries?.isEmpty == true)
        #expect(try store.changes(of: id, since: 3, in: store.currentMenu).entries == nil)
        try store.delete(id)
        #expect(throws: SessionStoreError.unknownSession) { try store.snapshot(of: id) }
        #expect(throws: SessionStoreError.unknownSession) { try store.apply(.toggle(groupID: "a"), to: id) }
        #expect(throws: SessionStoreError.unknownSession) { try store.delete(id) }
        #expect(throws: SessionStoreError.unknownSession) { try store.snapshot(of: SessionID.random()) }
    }

    @Test("the change limit refuses a write and changes nothing", arguments: StoreKind.allCases)
    func theChangeLimitRefusesAWriteAndChangesNothing(kind: StoreKind) throws {
        let menu = try storeTestMenu()
        let subject = try StoreUnderTest(kind, menu: menu, maxChangedGroups: 1)
        defer { subject.stop() }
        let store = subject.store
        let id = try store.create()
        _ = try store.apply(.toggle(groupID: "d"), to: id)
        #expect(throws: SessionStoreError.tooManyChanges(limit: 1)) { try store.apply(.toggle(groupID: "c"), to: id) }
        #expect(try store.snapshot(of: id).revision == 1)
        #expect(expandedGroups(try store.state(of: id), on: menu) == ["a", "c", "d", "e"])
        // A write that adds no change is allowed (d is expanded already): no new revision.
        #expect(try store.apply(.set(groupID: "d", isExpanded: true), to: id).revision == 1)
        // Back to the default is always allowed; so is a whole-tree set that leaves no entry.
        #expect(try store.apply(.toggle(groupID: "d"), to: id).revision == 2)
        #expect(try store.apply(.setAll(.collapsed), to: id).revision == 3)
        var ignored: [String] = []
        let big = SessionState(
            portable: PortableState(flips: [.init(id: "a", isExpanded: false), .init(id: "d", isExpanded: true)]),
            in: menu, ignoredIDs: &ignored)
        #expect(throws: SessionStoreError.tooManyChanges(limit: 1)) {
            try store.create(in: store.currentMenu, state: big)
        }
    }

    @Test(
        "the history keeps its limit, and a session created by a write starts at revision 1",
        arguments: StoreKind.allCases)
    func theHistoryKeepsItsLimitAndASessionCreatedByAWriteStartsAtOne(kind: StoreKind) throws {
        let subject = try StoreUnderTest(kind, menu: try storeTestMenu(), historyLimit: 2)
        defer { subject.stop() }
        let store = subject.store
        let created = try store.apply(.toggle(groupID: "c"), to: nil)
        #expect(created.created && created.revision == 1)
        let id = created.sessionID
        #expect(try store.changes(of: id, since: 0, in: store.currentMenu).entries?.map(\.revision) == [1])
        for _ in 0 ..< 3 { _ = try store.apply(.toggle(groupID: "e"), to: id) }
        let changes = try store.changes(of: id, since: 2, in: store.currentMenu)
        #expect(changes.revision == 4 && changes.entries?.map(\.revision) == [3, 4])
        #expect(try store.changes(of: id, since: 1, in: store.currentMenu).entries == nil)
        let unchanged = try store.apply(.set(groupID: "a", isExpanded: true), to: nil)
        #expect(unchanged.created && unchanged.revision == 0)
        #expect(try store.snapshot(of: unchanged.sessionID).revision == 0)
    }

    @Test(
        "a reveal past the changed-groups cap is refused whole and leaves the session as it was",
        arguments: StoreKind.allCases)
    func aRevealPastTheCapIsRefusedWhole(kind: StoreKind) throws {
        let subject = try StoreUnderTest(kind, menu: try storeTestMenu(), maxChangedGroups: 1)
        defer { subject.stop() }
        let store = subject.store
        let id = try store.create()
        _ = try store.apply(.toggle(groupID: "d"), to: id)
        let before = try store.snapshot(of: id)
        // b1 sits under b (collapsed by default): revealing it would change a second group.
        #expect(throws: SessionStoreError.tooManyChanges(limit: 1)) { try store.apply(.reveal(nodeID: "b1"), to: id) }
        #expect(try store.snapshot(of: id) == before)
        // Within the cap it goes through: b alone opens, a is open already.
        let other = try store.create()
        let shown = try store.apply(.reveal(nodeID: "b1"), to: other)
        #expect(shown.revision == 1 && shown.change.groupChange?.index == 3 && shown.state.changedGroupCount == 1)
        #expect(shown.change.splice == RowChange(at: 3, inserted: 1, removed: 0))
        #expect(throws: SessionStoreError.expansion(.unknownNode(id: "nope"))) {
            try store.apply(.reveal(nodeID: "nope"), to: other)
        }
    }

    /// The stores that tell time by a clock the test moves; Redis expires keys on its own clock
    /// (RedisStoreExpiryTests).
    static let clockedKinds: [StoreKind] = [.memory, .durable]

    @Test("deleting an expired session answers unknown, as reads do, and removes it", arguments: clockedKinds)
    func deletingAnExpiredSessionAnswersUnknownAsReadsDo(kind: StoreKind) throws {
        let clock = DurableTestClock()
        let subject = try StoreUnderTest(kind, menu: try storeTestMenu(), timeToLive: .seconds(60), clock: clock)
        defer { subject.stop() }
        let store = subject.store
        let id = try store.create()
        clock.advance(.seconds(60))
        #expect(throws: SessionStoreError.unknownSession) { try store.delete(id) }
        #expect(subject.heldCount?() == 0)
        #expect(throws: SessionStoreError.unknownSession) { try store.snapshot(of: id) }
        #expect(throws: SessionStoreError.unknownSession) { try store.delete(id) }
    }
}
