import Testing

@testable import MenuModel

/// Expand all, collapse all and the recursive changes: what the state holds after them (a
/// constant amount, whatever the menu's size), what a change reports for a hidden group, and how
/// a state with a base mode and marks is carried over by id (reloads, stores).
@Suite struct BulkExpansionTests {
    /// The same menu as the translation tests: a collapsed group holding an open one, an open
    /// group, a collapsed group and a row.
    static let base = MenuTranslationTests.base

    @Test func expandingOrCollapsingAllOfALargeMenuLeavesAStateOfNoEntries() throws {
        var rng = SplitMix64(state: 7)
        let spec = DifferentialTests.largeTree(using: &rng)
        let menu = try makeMenu(spec)
        let naive = NaiveMenu(spec: spec)
        var view = FlattenedView(menu: menu)
        for group in menu.nodes.filter(menu.isGroup).prefix(500) { _ = try view.toggle(menu.id(of: group)) }
        #expect(view.state.changedGroupCount == 500)
        let change = view.setAll(.expanded)
        #expect(view.state.changedGroupCount == 0 && view.state.markCount == 0 && view.state.overlayEntryCount == 0)
        #expect(view.count == menu.nodeCount)
        #expect(view.leafCount == naive.preorder().filter { !$0.isGroup }.count)
        #expect(change.change == RowChange(at: 0, inserted: menu.nodeCount, removed: change.change.removed))
        // A deep page reads the right rows: row r is node r + 1 when everything is open.
        let deep = view.visibleNodes(offset: menu.nodeCount - 10, limit: 10)
        #expect(deep.map(\.node) == Array(menu.nodeCount - 9 ... menu.nodeCount))
        view.setAll(.collapsed)
        #expect(view.state.changedGroupCount == 0 && view.state.overlayEntryCount == 0)
        #expect(view.count == spec.count)
    }

    @Test func aRecursiveChangeHoldsOneMarkAndItsAncestorsEntries() throws {
        var rng = SplitMix64(state: 8)
        let menu = try makeMenu(DifferentialTests.largeTree(using: &rng))
        var view = FlattenedView(menu: menu)
        view.setAll(.collapsed)
        // The deepest group with children, and a top-level one holding thousands of nodes.
        let deep = menu.nodes.filter { menu.childCount(of: $0) > 0 }.max { menu.depth(of: $0) < menu.depth(of: $1) }!
        _ = try view.setExpanded(menu.id(of: deep), true, recursive: true)
        #expect(view.state.markCount == 1 && view.state.changedGroupCount == 1)
        #expect(view.state.overlayEntryCount <= menu.depth(of: deep) + 1)
        let top = menu.nodes.first { menu.parent(of: $0) == nil && menu.subtreeEnd($0) - $0 > 500 }!
        let change = try view.setExpanded(menu.id(of: top), true, recursive: true)
        #expect(view.state.markCount == 1 && view.state.overlayEntryCount == 1)  // the deep mark was inside
        #expect(change.change == RowChange(at: change.index! + 1, inserted: menu.subtreeEnd(top) - top - 1, removed: 0))
    }

    @Test func aRecursiveChangeOfAHiddenGroupReportsNoRowAndShowsWhenTheGroupAppears() throws {
        let menu = try makeMenu(Self.base)
        var view = FlattenedView(menu: menu)
        let before = view.count
        let change = try view.setExpanded("a2", false, recursive: true)  // inside collapsed "a"
        #expect(change == ExpansionChange(id: "a2", isExpanded: false, index: nil, change: nil))
        #expect(view.count == before)
        _ = try view.toggle("a")
        #expect(view.rows(offset: 0, limit: 10).map(\.id) == ["a", "a1", "a2", "a3", "b", "b1", "b2", "c", "d"])
    }

    @Test func aRecursiveChangeOfARowOrAnUnknownIDIsRefused() throws {
        var view = FlattenedView(menu: try makeMenu(Self.base))
        #expect(throws: ExpansionError.notAGroup(id: "d")) { try view.setExpanded("d", true, recursive: true) }
        #expect(throws: ExpansionError.unknownGroup(id: "zz")) { try view.setExpanded("zz", true, recursive: true) }
        #expect(view.state == SessionState())
    }

    /// A state of every kind: base collapsed, "b" expanded recursively, "b1" flipped under it,
    /// "c" flipped against the base.
    static func mixedState(on menu: Menu) throws -> SessionState {
        var view = FlattenedView(menu: menu)
        view.setAll(.collapsed)
        _ = try view.setExpanded("b", true, recursive: true)
        _ = try view.toggle("b1")
        _ = try view.toggle("c")
        return view.state
    }

    @Test func thePortableFormRoundTripsAndNamesWhatItHolds() throws {
        let menu = try makeMenu(Self.base)
        let state = try Self.mixedState(on: menu)
        let portable = state.portable(in: menu)
        #expect(
            portable
                == PortableState(
                    base: .collapsed, marks: [.init(id: "b", mode: .expanded)],
                    flips: [.init(id: "b1", isExpanded: false), .init(id: "c", isExpanded: true)]))
        var ignored: [String] = []
        let restored = SessionState(portable: portable, in: menu, ignoredIDs: &ignored)
        #expect(restored == state && ignored.isEmpty)
        #expect(MenuTranslationTests.overlay(restored) == MenuTranslationTests.overlay(state))
    }

    @Test func restoringIgnoresAndReportsIDsThatNameNoGroup() throws {
        let menu = try makeMenu(Self.base)
        let portable = PortableState(
            base: .expanded, marks: [.init(id: "gone", mode: .collapsed), .init(id: "d", mode: .collapsed)],
            flips: [.init(id: "a", isExpanded: false), .init(id: "a1", isExpanded: true)])
        var ignored: [String] = []
        let state = SessionState(portable: portable, in: menu, ignoredIDs: &ignored)
        #expect(ignored == ["gone", "d", "a1"])
        #expect(
            state.portable(in: menu) == PortableState(base: .expanded, flips: [.init(id: "a", isExpanded: false)]))
    }

    @Test func aStateWithMarksIsCarriedThroughAReloadAsRestoringItByIDWould() throws {
        let old = try makeMenu(Self.base)
        // c moved to the front and given a new child; b1's default flipped.
        let new = try makeMenu([
            TreeSpec.group(
                "c", expanded: false, [.row("c1"), .row("c2"), .group("c3", expanded: false, [.row("c3x")])]),
            Self.base[0],
            .group("b", expanded: true, [.group("b1", expanded: true, [.row("b1x")]), .row("b2")]),
            Self.base[3]
        ])
        let state = try Self.mixedState(on: old)
        let carried = state.carried(through: [MenuTranslation(from: old, to: new)], onto: new)
        var ignored: [String] = []
        let restored = SessionState(portable: state.portable(in: old), in: new, ignoredIDs: &ignored)
        #expect(ignored.isEmpty)
        #expect(carried == restored)
        #expect(MenuTranslationTests.overlay(carried) == MenuTranslationTests.overlay(restored))
        let view = FlattenedView(menu: new, state: carried)
        // Base collapsed kept; b expanded throughout but b1 still closed; c still open.
        #expect(view.rows(offset: 0, limit: 20).map { $0.id } == ["c", "c1", "c2", "c3", "a", "b", "b1", "b2", "d"])
    }

    @Test func aMarkWhoseGroupIsGoneIsDroppedAndTheFlipsUnderItKeepTheirState() throws {
        let old = try makeMenu(Self.base)
        var view = FlattenedView(menu: old)
        _ = try view.setExpanded("a", true, recursive: true)  // a and a2 open
        _ = try view.toggle("a2")  // a2 closed under the mark
        // "a" is gone; a2 survives at the top level, with its default open.
        let new = try makeMenu([Self.base[1], Self.base[0].children![1], Self.base[2], Self.base[3]])
        let carried = view.state.carried(through: [MenuTranslation(from: old, to: new)], onto: new)
        #expect(carried.markCount == 0)
        #expect(carried.portable(in: new) == PortableState(flips: [.init(id: "a2", isExpanded: false)]))
    }

    @Test func theBaseModeIsCarriedThroughAChainOfReloads() throws {
        let first = try makeMenu(Self.base)
        let second = try makeMenu(Array(Self.base.dropLast()))
        let third = try makeMenu(Self.base)
        var view = FlattenedView(menu: first)
        view.setAll(.expanded)
        _ = try view.toggle("b")
        let chain = [MenuTranslation(from: first, to: second), MenuTranslation(from: second, to: third)]
        let carried = view.state.carried(through: chain, onto: third)
        let stepwise = view.state.carried(through: [chain[0]], onto: second).carried(through: [chain[1]], onto: third)
        #expect(carried == stepwise)
        #expect(
            carried.portable(in: third)
                == PortableState(base: .expanded, flips: [.init(id: "b", isExpanded: false)]))
    }
}
