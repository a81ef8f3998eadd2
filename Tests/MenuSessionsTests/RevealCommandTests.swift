import MenuModel
import NaiveReference
import Testing
@testable import MenuSessions

/// `ExpansionCommand.reveal` in the in-memory store: it lists every group it sets (what the
/// durable store journals), and a reveal past the changed-groups cap is undone whole.
@Suite("Sessions: the reveal command")
struct RevealCommandTests {
    /// g1 (closed) > g2 (closed) > g3 (closed) > leaf; h (closed) > h1.
    static func menu() throws -> Menu {
        try makeMenu([
            .group("g1", expanded: false, [.group("g2", expanded: false, [.group("g3", expanded: false, [.row("leaf")])])]),
            .group("h", expanded: false, [.row("h1")]),
        ])
    }

    @Test func aRevealListsTheGroupsItSetFromTheTopDown() throws {
        var view = FlattenedView(menu: try Self.menu())
        let outcome = try ExpansionCommand.reveal(nodeID: "leaf").run(on: &view, maxChangedGroups: 10)
        #expect(outcome.groupsSet.map(\.id) == ["g1", "g2", "g3"] && outcome.groupsSet.allSatisfy(\.isExpanded))
        #expect(outcome.change.groupChange?.index == 3 && outcome.change.splice == RowChange(at: 1, inserted: 3, removed: 0))
        #expect(outcome.changedState)
        let again = try ExpansionCommand.reveal(nodeID: "leaf").run(on: &view, maxChangedGroups: 10)
        #expect(again.groupsSet.isEmpty && again.change.splice == nil && !again.changedState)
    }

    @Test func aRevealPastTheCapIsUndoneWhole() throws {
        let store = InMemorySessionStore(menu: try Self.menu(), maxChangedGroups: 2)
        let id = try store.create()
        _ = try store.apply(.toggle(groupID: "h"), to: id)
        #expect(throws: SessionStoreError.tooManyChanges(limit: 2)) { try store.apply(.reveal(nodeID: "leaf"), to: id) }
        #expect(try store.state(of: id).changedGroupCount == 1)
        // Within the cap it goes through: g1 alone opens for g2.
        let shown = try store.apply(.reveal(nodeID: "g2"), to: id)
        #expect(shown.change.groupChange?.index == 1 && shown.state.changedGroupCount == 2)
        #expect(throws: SessionStoreError.expansion(.unknownNode(id: "nope"))) { try store.apply(.reveal(nodeID: "nope"), to: id) }
    }
}
