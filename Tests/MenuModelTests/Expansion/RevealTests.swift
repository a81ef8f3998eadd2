import NaiveReference
import Testing

@testable import MenuModel

/// ``FlattenedView/reveal(_:)``, ``FlattenedView/ancestors(of:)`` and
/// ``FlattenedView/visibleDescendantCount(ofNode:)`` on a small menu, one behaviour per test (the
/// differential test mixes them with toggles on random trees).
@Suite struct RevealTests {
    /// a (open) > [a1, ab (closed) > [ab1, abc (closed) > [abc1]]], z (closed) > [z1].
    static let spec: [TreeSpec] = [
        .group(
            "a", expanded: true,
            [
                .row("a1"),
                .group("ab", expanded: false, [.row("ab1"), .group("abc", expanded: false, [.row("abc1")])])
            ]),
        .group("z", expanded: false, [.row("z1")])
    ]

    @Test func revealOpensEveryCollapsedAncestorAsOneSpliceAfterTheTopmost() throws {
        var view = FlattenedView(menu: try makeMenu(Self.spec))
        #expect(view.rows(offset: 0, limit: 10).map(\.id) == ["a", "a1", "ab", "z"])
        let change = try view.reveal("abc1")
        #expect(
            change
                == ExpansionChange(
                    id: "abc1", isExpanded: false, index: 5, change: RowChange(at: 3, inserted: 3, removed: 0)))
        #expect(view.rows(offset: 0, limit: 10).map(\.id) == ["a", "a1", "ab", "ab1", "abc", "abc1", "z"])
        #expect(view.leafCount == 3)
    }

    @Test func revealOfAVisibleNodeChangesNothing() throws {
        var view = FlattenedView(menu: try makeMenu(Self.spec))
        let before = view.state
        #expect(try view.reveal("ab") == ExpansionChange(id: "ab", isExpanded: false, index: 2, change: nil))
        #expect(try view.reveal("a") == ExpansionChange(id: "a", isExpanded: true, index: 0, change: nil))
        #expect(view.state == before)
    }

    @Test func revealOfAnUnknownIDIsRefusedAndChangesNothing() throws {
        var view = FlattenedView(menu: try makeMenu(Self.spec))
        #expect(throws: ExpansionError.unknownNode(id: "nope")) { try view.reveal("nope") }
        #expect(view.state == SessionState())
    }

    @Test func revealOnlyOpensWhatIsCollapsedAndLeavesTheNodeItself() throws {
        var view = FlattenedView(menu: try makeMenu(Self.spec))
        _ = try view.setExpanded("a", false)
        _ = try view.setExpanded("abc", true)  // hidden, already open
        let change = try view.reveal("abc")
        // a and ab open; abc keeps its state (open), so abc1 shows too.
        #expect(
            change
                == ExpansionChange(
                    id: "abc", isExpanded: true, index: 4, change: RowChange(at: 1, inserted: 5, removed: 0)))
        #expect(view.rows(offset: 0, limit: 10).map(\.id) == ["a", "a1", "ab", "ab1", "abc", "abc1", "z"])
    }

    @Test func ancestorsAndVisibleDescendantCounts() throws {
        var view = FlattenedView(menu: try makeMenu(Self.spec))
        let menu = view.menu
        let node = { (id: String) in menu.node(withID: id)! }
        #expect(view.ancestors(of: node("abc1")).map(menu.id(of:)) == ["a", "ab", "abc"])
        #expect(view.ancestors(of: node("z")).isEmpty)
        #expect(view.collapsedAncestors(of: node("abc1")).map(menu.id(of:)) == ["ab", "abc"])
        #expect(view.visibleDescendantCount(ofNode: node("a")) == 2)
        #expect(view.visibleDescendantCount(ofNode: node("ab")) == 0)
        #expect(view.visibleDescendantCount(ofNode: node("a1")) == 0)
        _ = try view.reveal("abc1")
        #expect(view.visibleDescendantCount(ofNode: node("a")) == 5)
        #expect(view.visibleDescendantCount(ofNode: node("ab")) == 3)
        let rows = view.rows(offset: 0, limit: 10)
        #expect(rows.map(\.visibleDescendantCount) == [5, nil, 3, nil, 1, nil, 0])
        #expect(rows.map(\.parentID) == [nil, "a", "a", "ab", "ab", "abc", nil])
    }
}
