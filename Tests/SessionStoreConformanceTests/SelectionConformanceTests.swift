import Foundation
import MenuModel
import MenuSessions
import MenuTestSupport
import Testing

/// Selection in every store (issue 28 §1): a write is a revision with a `reconfigured` history
/// entry, a repeat is none, a group's `maxSelect` refuses a write that passes it and leaves the
/// session as it was, a write on the expansion keeps the selection, and a reload carries it by id.
@Suite("Session stores: selection", .serialized)
struct SelectionConformanceTests {
    /// a (open) > [a1, a2, b (closed) > [b1, b2]]; s (closed, maxSelect 2) > [s1, s2, s3].
    static let config = #"""
        {"items": [
          {"id": "a", "title": "A", "expanded": true, "items": [
            {"id": "a1", "title": "A1"}, {"id": "a2", "title": "A2"},
            {"id": "b", "title": "B", "items": [{"id": "b1", "title": "B1"}, {"id": "b2", "title": "B2"}]}]},
          {"id": "s", "title": "S", "maxSelect": 2, "items": [
            {"id": "s1", "title": "S1"}, {"id": "s2", "title": "S2"}, {"id": "s3", "title": "S3"}]}
        ]}
        """#

    static func menu(_ config: String = config) throws -> Menu { try Menu(jsonData: Data(config.utf8)) }

    static func selected(_ state: SessionState, on menu: Menu) -> [String] {
        menu.nodes.filter { !menu.isGroup($0) && state.selection.isSelected($0, in: menu) }.map { menu.id(of: $0) }
    }

    @Test(arguments: StoreKind.allCases)
    func aSelectionIsARevisionWithItsRowsInTheHistoryAndARepeatIsNone(kind: StoreKind) throws {
        let menu = try Self.menu()
        let subject = try StoreUnderTest(kind, menu: menu)
        defer { subject.stop() }
        let store = subject.store
        let id = try store.create()
        let group = try store.apply(.select(nodeID: "b", selected: true), to: id)
        #expect(group.revision == 1 && Self.selected(group.state, on: menu) == ["b1", "b2"])
        // b is visible at row 3 and collapsed: its one row, and a's counts.
        #expect(
            group.change
                == .selection(
                    SelectionChange(
                        id: "b", node: menu.node(withID: "b")!, selected: true, changed: true,
                        rows: RowRange(at: 3, count: 1), selectedCount: 2)))
        #expect(try store.apply(.select(nodeID: "b", selected: true), to: id).revision == 1)
        let leaf = try store.apply(.select(nodeID: "b2", selected: false, excludedIDs: []), to: id)
        #expect(leaf.revision == 2 && Self.selected(leaf.state, on: menu) == ["b1"])
        let all = try store.apply(.selectAll(false), to: id)
        #expect(all.revision == 3 && Self.selected(all.state, on: menu).isEmpty)
        let entries = try #require(try store.changes(of: id, since: 0, in: store.currentMenu).entries)
        #expect(
            entries.map(\.reconfigured) == [
                ReconfiguredRows(at: 3, count: 1, node: menu.node(withID: "b")!),
                ReconfiguredRows(at: 3, count: 0, node: menu.node(withID: "b2")!),
                ReconfiguredRows(at: 0, count: 5, node: 0)
            ])
        #expect(entries.allSatisfy { $0.change == nil && $0.reload == nil })
        #expect(try store.snapshot(of: id).revision == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func aWritePastAMaxSelectIsRefusedAndChangesNothing(kind: StoreKind) throws {
        let menu = try Self.menu()
        let subject = try StoreUnderTest(kind, menu: menu)
        defer { subject.stop() }
        let store = subject.store
        let id = try store.create()
        _ = try store.apply(.select(nodeID: "s1", selected: true), to: id)
        #expect(throws: SessionStoreError.selectionAboveMaximum(groupID: "s", max: 2, selected: 3)) {
            try store.apply(.select(nodeID: "s", selected: true), to: id)
        }
        #expect(throws: SessionStoreError.selectionAboveMaximum(groupID: "s", max: 2, selected: 3)) {
            try store.apply(.selectAll(true), to: id)
        }
        let after = try store.snapshot(of: id)
        #expect(after.revision == 1 && Self.selected(after.state, on: menu) == ["s1"])
        // Left out as unavailable: within the rule.
        let within = try store.apply(.select(nodeID: "s", selected: true, excludedIDs: ["s3"]), to: id)
        #expect(within.revision == 2 && Self.selected(within.state, on: menu) == ["s1", "s2"])
    }

    @Test(arguments: StoreKind.allCases)
    func expansionWritesKeepTheSelectionAndAReloadCarriesItByID(kind: StoreKind) throws {
        let menu = try Self.menu()
        let subject = try StoreUnderTest(kind, menu: menu)
        defer { subject.stop() }
        let store = subject.store
        let id = try store.create()
        _ = try store.apply(.select(nodeID: "a", selected: true), to: id)
        _ = try store.apply(.select(nodeID: "a2", selected: false), to: id)
        _ = try store.apply(.setAll(.expanded), to: id)
        _ = try store.apply(.toggle(groupID: "b"), to: id)
        #expect(Self.selected(try store.state(of: id), on: menu) == ["a1", "b1", "b2"])
        // The next menu drops a2 (a toggle) and adds b3 under b: b3 is selected as b's leaves are.
        let next = try Self.menu(
            Self.config.replacingOccurrences(of: #"{"id": "a2", "title": "A2"},"#, with: "")
                .replacingOccurrences(
                    of: #"{"id": "b2", "title": "B2"}"#,
                    with: #"{"id": "b2", "title": "B2"}, {"id": "b3", "title": "B3"}"#))
        let generation = store.currentMenu.succeeded(by: next, keepingPrevious: true)
        store.adopt(generation)
        let carried = try store.snapshot(of: id, in: generation)
        #expect(Self.selected(carried.state, on: next) == ["a1", "b1", "b2", "b3"])
        #expect(carried.state.selection.portable.toggled == ["a"])
    }
}
