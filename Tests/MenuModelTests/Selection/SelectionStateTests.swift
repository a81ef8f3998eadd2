import Foundation
import NaiveReference
import Testing

@testable import MenuModel

/// A selection must agree with the obvious one, a set of leaves changed leaf by leaf, after every
/// write of a random sequence: each leaf's state, every group's selected count, pages of the
/// selected leaves in menu order, and the state rebuilt from its portable form. Equality means
/// "the same leaves". Memory stays O(1) for whole-group and select-all writes.
@Suite struct SelectionStateTests {
    static let baseSeed: UInt64 =
        ProcessInfo.processInfo.environment["MENU_DIFFERENTIAL_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 0 ... UInt64.max)

    /// The leaves of `node`'s subtree (itself for a leaf; the whole menu for 0).
    static func leaves(of node: Menu.Node, in menu: Menu) -> [Menu.Node] {
        let range = node == 0 ? menu.nodes : node ..< menu.subtreeEnd(node)
        return range.filter { !menu.isGroup($0) }
    }

    static func check(
        _ state: SelectionState, against reference: Set<Menu.Node>, on menu: Menu, _ context: String
    ) throws {
        for leaf in leaves(of: 0, in: menu) where state.isSelected(leaf, in: menu) != reference.contains(leaf) {
            Issue.record("\(context): leaf \(menu.id(of: leaf)) selected \(!reference.contains(leaf))")
            return
        }
        for node in [0] + menu.nodes.filter(menu.isGroup) {
            let expected = leaves(of: node, in: menu).count(where: reference.contains)
            #expect(state.selectedCount(in: node, of: menu) == expected, "\(context): count in \(node)")
        }
        let selected = leaves(of: 0, in: menu).filter(reference.contains)
        for (offset, limit) in [(0, selected.count + 1), (0, 3), (selected.count / 2, 7), (selected.count, 5)] {
            let page = state.selectedLeaves(in: menu, offset: offset, limit: limit)
            let expected = Array(selected.dropFirst(offset).prefix(limit))
            #expect(page == expected, "\(context): page \(offset)+\(limit)")
        }
        // A page's reader, rows in menu order from a few places, then out of order.
        for start in [0, menu.nodeCount / 3, menu.nodeCount - 5] where start >= 0 {
            var reader = SelectionState.RowReader(state, in: menu)
            for node in Array(menu.nodes.dropFirst(start)) + menu.nodes.reversed().prefix(20) {
                let ours =
                    menu.isGroup(node)
                    ? reader.selectedCount(in: node, leaves: menu.leafCount(of: node)) : reader.isSelected(node) ? 1 : 0
                let expected = leaves(of: node, in: menu).count(where: reference.contains)
                guard ours == expected else {
                    Issue.record("\(context): the row reader from \(start) reads \(ours) at \(node), not \(expected)")
                    return
                }
            }
        }
        #expect(state.portable.toggled == state.toggledNodes.map(menu.id(of:)), "\(context): the toggles' ids")
        var ignored: [String] = []
        let rebuilt = SelectionState(portable: state.portable, in: menu, ignoredIDs: &ignored)
        #expect(rebuilt == state && ignored.isEmpty, "\(context): portable round trip")
        #expect(rebuilt.selectedCount(of: menu) == reference.count)
    }

    @Test(arguments: 0 ..< 8)
    func everyWriteLeavesTheLeavesTheNaiveSetHas(run: Int) throws {
        let seed = Self.baseSeed &+ UInt64(run)
        var rng = SplitMix64(state: seed)
        let menu = try makeMenu(randomTree(nodes: 120, maxDepth: 5, using: &rng))
        let allLeaves = Self.leaves(of: 0, in: menu)
        var state = SelectionState()
        var reference = Set<Menu.Node>()
        for step in 0 ..< 150 {
            let context = "seed \(seed) step \(step)"
            let before = state
            let beforeReference = reference
            let changed: Bool
            switch Int.random(in: 0 ..< 12, using: &rng) {
            case 0:
                let all = Bool.random(using: &rng)
                changed = state.setAll(all)
                reference = all ? Set(allLeaves) : []
            default:
                let node = menu.nodes.randomElement(using: &rng)!
                let selected = Int.random(in: 0 ..< 3, using: &rng) > 0
                let subtree = Self.leaves(of: node, in: menu)
                let excluded = selected ? subtree.filter { _ in Int.random(in: 0 ..< 6, using: &rng) == 0 } : []
                changed = state.set(node, selected: selected, in: menu, excluding: excluded)
                if selected {
                    reference.formUnion(subtree)
                    reference.subtract(excluded)
                } else {
                    reference.subtract(subtree)
                }
            }
            #expect(changed == (reference != beforeReference), "\(context): changed")
            #expect((state == before) == (reference == beforeReference), "\(context): equality")
            try Self.check(state, against: reference, on: menu, context)
        }
    }

    @Test func selectingEverythingOrAWholeGroupTakesOneToggleWhateverItHeldBefore() throws {
        var rng = SplitMix64(state: 7)
        let menu = try makeMenu(randomTree(nodes: 400, maxDepth: 5, using: &rng))
        var state = SelectionState()
        for leaf in Self.leaves(of: 0, in: menu) { state.set(leaf, selected: true, in: menu) }
        #expect(state.selectedCount(of: menu) == Self.leaves(of: 0, in: menu).count)
        #expect(state.toggleCount > 100)
        state.setAll(true)
        #expect(state.toggleCount == 0 && state.heapBytes == 0)
        let group = try #require(menu.nodes.first { menu.isGroup($0) && menu.leafCount(of: $0) > 3 })
        state.set(group, selected: false, in: menu)
        #expect(state.toggleCount == 1)
        state.set(group, selected: true, in: menu)
        #expect(state.toggleCount == 0)
        #expect(state == SelectionState(all: true))
    }

    @Test func aGroupSelectedChildByChildEqualsTheGroupSelected() throws {
        let menu = try makeMenu([
            .group("a", nil, [.row("a1"), .group("b", nil, [.row("b1"), .row("b2")]), .group("empty", nil, [])]),
            .row("c")
        ])
        var byChild = SelectionState()
        for id in ["a1", "b1", "b2"] { byChild.set(try #require(menu.node(withID: id)), selected: true, in: menu) }
        var byGroup = SelectionState()
        byGroup.set(try #require(menu.node(withID: "a")), selected: true, in: menu)
        #expect(byChild == byGroup)
        #expect(byChild.portable.toggled == ["a1", "b1", "b2"])
        #expect(byGroup.portable == PortableSelection(all: false, toggled: ["a"]))
        // Selecting an empty group selects no leaf: nothing changes.
        #expect(!byGroup.set(try #require(menu.node(withID: "empty")), selected: true, in: menu))
    }

    @Test func aReloadKeepsTheTogglesWhoseIdsSurviveAndNamesTheOthers() throws {
        let old = try makeMenu([.group("a", nil, [.row("a1"), .row("a2")]), .row("gone"), .row("c")])
        let new = try makeMenu([.row("c"), .group("a", nil, [.row("a0"), .row("a1"), .row("a2")])])
        var state = SelectionState()
        state.set(try #require(old.node(withID: "a")), selected: true, in: old)
        state.set(try #require(old.node(withID: "gone")), selected: true, in: old)
        var dropped: [String] = []
        let carried = state.carried(to: new, dropped: &dropped)  // no look at `old`: its ids are the state's
        #expect(dropped == ["gone"])
        // The group is selected by id: its new leaf with it.
        #expect(carried.selectedLeaves(in: new, offset: 0, limit: 10).map(new.id(of:)) == ["a0", "a1", "a2"])
    }
}
