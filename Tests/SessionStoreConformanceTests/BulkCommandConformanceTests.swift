import MenuModel
import MenuSessions
import NaiveReference
import Testing

/// `SessionCommand.setAll` and `.setSubtree` in every store: one splice each, a revision only
/// when the state changes, a constant number of entries whatever they affect, and the change
/// limit counted in entries.
@Suite("Session stores: expand or collapse all, and recursively", .serialized)
struct BulkCommandConformanceTests {
    /// a (open) > [a1, b (closed) > [b1, c (closed) > [c1]]]; d (closed) > [d1].
    static func menu() throws -> Menu {
        try makeMenu([
            .group(
                "a", expanded: true,
                [.row("a1"), .group("b", expanded: false, [.row("b1"), .group("c", expanded: false, [.row("c1")])])]),
            .group("d", expanded: false, [.row("d1")])
        ])
    }

    @Test(arguments: StoreKind.allCases)
    func expandAllIsOneWholeTableSpliceAndOneRevision(kind: StoreKind) throws {
        let subject = try StoreUnderTest(kind, menu: try Self.menu())
        defer { subject.stop() }
        let store = subject.store
        let id = try store.create()
        let all = try store.apply(.setAll(.expanded), to: id)
        #expect(
            all.change == .all(ExpansionResetChange(mode: .expanded, change: RowChange(at: 0, inserted: 8, removed: 4)))
        )
        #expect(all.revision == 1 && all.state.changedGroupCount == 0)
        // Again: the same state, no revision, the same table as its splice.
        let again = try store.apply(.setAll(.expanded), to: id)
        #expect(again.revision == 1 && again.change.splice == RowChange(at: 0, inserted: 8, removed: 8))
        let back = try store.apply(.setAll(.default), to: id)
        #expect(back.revision == 2 && back.state == SessionState())
        let changes = try store.changes(of: id, since: 0, in: store.currentMenu)
        #expect(
            changes.entries?.map(\.change) == [
                RowChange(at: 0, inserted: 8, removed: 4), RowChange(at: 0, inserted: 4, removed: 8)
            ])
    }

    @Test(arguments: StoreKind.allCases)
    func aRecursiveSetIsOneMarkAndItsSpliceBothRemovesAndInserts(kind: StoreKind) throws {
        let subject = try StoreUnderTest(kind, menu: try Self.menu())
        defer { subject.stop() }
        let store = subject.store
        let id = try store.create()
        _ = try store.apply(.toggle(groupID: "b"), to: id)  // a, a1, b, b1, c, d
        let deep = try store.apply(.setSubtree(groupID: "a", isExpanded: true), to: id)
        #expect(
            deep.change.groupChange
                == ExpansionChange(
                    id: "a", isExpanded: true, index: 0, change: RowChange(at: 1, inserted: 5, removed: 4)))
        #expect(deep.revision == 2 && deep.state.changedGroupCount == 1 && deep.state.markCount == 1)
        let same = try store.apply(.setSubtree(groupID: "a", isExpanded: true), to: id)
        #expect(same.revision == 2)
        let closed = try store.apply(.setSubtree(groupID: "a", isExpanded: false), to: id)
        #expect(closed.revision == 3 && closed.change.splice == RowChange(at: 1, inserted: 0, removed: 5))
        #expect(throws: SessionStoreError.expansion(.notAGroup(id: "a1"))) {
            try store.apply(.setSubtree(groupID: "a1", isExpanded: true), to: id)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aRecursiveSetPastTheLimitIsUndoneWhole(kind: StoreKind) throws {
        let subject = try StoreUnderTest(kind, menu: try Self.menu(), maxChangedGroups: 1)
        defer { subject.stop() }
        let store = subject.store
        let id = try store.create()
        _ = try store.apply(.toggle(groupID: "d"), to: id)
        #expect(throws: SessionStoreError.tooManyChanges(limit: 1)) {
            try store.apply(.setSubtree(groupID: "b", isExpanded: true), to: id)
        }
        #expect(try store.snapshot(of: id) == SessionSnapshot(state: store.state(of: id), revision: 1))
        #expect(try store.state(of: id).markCount == 0)
        // One that replaces as many entries as it adds goes through: d's flip is inside nothing, so
        // collapsing all clears it.
        #expect(try store.apply(.setAll(.collapsed), to: id).state.changedGroupCount == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func aSessionCreatedFromAStateStartsAtRevisionZeroHoldingIt(kind: StoreKind) throws {
        let menu = try Self.menu()
        let subject = try StoreUnderTest(kind, menu: menu, maxChangedGroups: 2)
        defer { subject.stop() }
        let store = subject.store
        var ignored: [String] = []
        let state = SessionState(
            portable: PortableState(
                base: .collapsed, marks: [.init(id: "b", mode: .expanded)],
                flips: [.init(id: "d", isExpanded: true), .init(id: "zz", isExpanded: true)]),
            in: menu, ignoredIDs: &ignored)
        #expect(ignored == ["zz"])
        let id = try store.create(in: store.currentMenu, state: state)
        #expect(try store.snapshot(of: id) == SessionSnapshot(state: state, revision: 0))
        var tooMany = PortableState()
        tooMany.flips = [
            .init(id: "a", isExpanded: false), .init(id: "b", isExpanded: true), .init(id: "d", isExpanded: true)
        ]
        let big = SessionState(portable: tooMany, in: menu, ignoredIDs: &ignored)
        #expect(throws: SessionStoreError.tooManyChanges(limit: 2)) {
            try store.create(in: store.currentMenu, state: big)
        }
    }
}
