import MenuModel
import NaiveReference
import Testing

@testable import MenuSessions

/// `SessionCommand.reveal` lists every group it sets (what the durable store journals); the
/// stores' handling of the changed-groups cap is SessionStoreConformanceTests'.
@Suite("Sessions: the reveal command")
struct RevealCommandTests {
    /// g1 (closed) > g2 (closed) > g3 (closed) > leaf; h (closed) > h1.
    static func menu() throws -> Menu {
        try makeMenu([
            .group(
                "g1", expanded: false, [.group("g2", expanded: false, [.group("g3", expanded: false, [.row("leaf")])])]),
            .group("h", expanded: false, [.row("h1")])
        ])
    }

    @Test func aRevealListsTheGroupsItSetFromTheTopDown() throws {
        var view = FlattenedView(menu: try Self.menu())
        let outcome = try SessionCommand.reveal(nodeID: "leaf").run(on: &view, maxChangedGroups: 10)
        #expect(outcome.groupsSet.map(\.id) == ["g1", "g2", "g3"] && outcome.groupsSet.allSatisfy(\.isExpanded))
        #expect(
            outcome.change.groupChange?.index == 3 && outcome.change.splice == RowChange(at: 1, inserted: 3, removed: 0)
        )
        #expect(outcome.changedState)
        let again = try SessionCommand.reveal(nodeID: "leaf").run(on: &view, maxChangedGroups: 10)
        #expect(again.groupsSet.isEmpty && again.change.splice == nil && !again.changedState)
    }
}
