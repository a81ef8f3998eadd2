import NaiveReference
import Testing

@testable import MenuModel

/// A session's expansion carried through reloads (``MenuTranslation``,
/// ``SessionState/carried(through:onto:)``) against the contract's reference: the session's
/// explicit choices, by id, applied one by one from scratch to a fresh view of the new menu, where
/// the id still names a group. Every comparison covers the whole view: the changed groups, the
/// overlay (exactly as flipping one by one builds it), `count`, `leafCount`, every row, pages and
/// `index(of:)` for every id.
@Suite struct MenuTranslationTests {
    /// g1 of the hand-written cases: a collapsed group holding an open one, an open group, a
    /// collapsed group and a row.
    static let base: [TreeSpec] = [
        .group(
            "a", expanded: false,
            [
                .row("a1"),
                .group("a2", expanded: true, [.row("a2x"), .row("a2y")]),
                .row("a3")
            ]),
        .group("b", expanded: true, [.group("b1", expanded: false, [.row("b1x")]), .row("b2")]),
        .group("c", expanded: false, [.row("c1"), .row("c2")]),
        .row("d")
    ]

    // MARK: The contract, case by case

    @Test func anIdenticalMenuKeepsTheSameState() throws {
        let old = try makeMenu(Self.base)
        let new = try makeMenu(Self.base)  // a reload of an unchanged file: a new Menu, same content
        let state = try Self.state(of: old, ["a": true, "a2": false, "b1": true, "c": true])
        let carried = state.carried(through: [MenuTranslation(from: old, to: new)], onto: new)
        #expect(carried == state)
        #expect(Self.overlay(carried) == Self.overlay(state))
        try Self.expectSameView(carried, as: Self.reference(state, from: old, to: new), "identical menu")
    }

    @Test func aGroupWhoseIdIsGoneIsDropped() throws {
        let old = try makeMenu(Self.base)
        let new = try makeMenu([Self.base[0], Self.base[2], Self.base[3]])  // b and b1 removed
        let state = try Self.state(of: old, ["a": true, "b1": true, "c": true])
        let carried = state.carried(through: [MenuTranslation(from: old, to: new)], onto: new)
        #expect(Set(carried.changedGroups(in: new).map(\.id)) == ["a", "c"])
        try Self.expectSameView(carried, as: Self.reference(state, from: old, to: new), "removed id")
    }

    @Test func aGroupTurnedIntoARowIsDropped() throws {
        let old = try makeMenu(Self.base)
        var edited = Self.base
        edited[2] = .row("c")
        let new = try makeMenu(edited)
        let state = try Self.state(of: old, ["a": true, "c": true])
        let carried = state.carried(through: [MenuTranslation(from: old, to: new)], onto: new)
        #expect(carried.changedGroups(in: new).map(\.id) == ["a"])
        try Self.expectSameView(carried, as: Self.reference(state, from: old, to: new), "group turned into a row")
    }

    /// a: collapsed by default, the user opened it, the new default is open. b: open by default,
    /// the user closed it, the new default is closed. Both now equal the default: no longer changed,
    /// still as the user left them. c: the user opened it, its default did not change: still changed.
    /// a2: the user left it alone, its default changed: it follows the new default.
    @Test func aChangedDefaultKeepsTheUsersExplicitChoice() throws {
        let old = try makeMenu(Self.base)
        var edited = Self.base
        edited[0].expanded = true
        edited[0].children![1].expanded = false
        edited[1].expanded = false
        let new = try makeMenu(edited)
        let state = try Self.state(of: old, ["a": true, "b": false, "c": true])
        let carried = state.carried(through: [MenuTranslation(from: old, to: new)], onto: new)
        #expect(carried.changedGroups(in: new).map(\.id) == ["c"])
        let view = FlattenedView(menu: new, state: carried)
        let expanded = ["a", "b", "c", "a2"].map { view.isExpanded(new.node(withID: $0)!) }
        #expect(expanded == [true, false, true, false])
        try Self.expectSameView(carried, as: Self.reference(state, from: old, to: new), "changed defaults")
    }

    /// a2 (open, with two rows) moves from under a to the top; b1 (opened by the user) moves from
    /// the top's second group down under a2; c moves under b. Every changed group sits at another
    /// position and depth, so the overlay is rebuilt along the new paths.
    @Test func movedGroupsKeepTheirChoiceWithAnOverlayForTheirNewPlace() throws {
        let old = try makeMenu(Self.base)
        let new = try makeMenu([
            .group("a", expanded: false, [.row("a1"), .row("a3")]),
            .group("a2", expanded: true, [.row("a2x"), .group("b1", expanded: false, [.row("b1x")]), .row("a2y")]),
            .group("b", expanded: true, [.row("b2"), .group("c", expanded: false, [.row("c1"), .row("c2")])]),
            .row("d")
        ])
        let state = try Self.state(of: old, ["a": true, "a2": false, "b1": true, "c": true])
        let carried = state.carried(through: [MenuTranslation(from: old, to: new)], onto: new)
        #expect(carried.changedGroupCount == 4)
        try Self.expectSameView(carried, as: Self.reference(state, from: old, to: new), "moved groups")
    }

    /// c is opened in g1, gone in g2, back (collapsed by default) in g3: the session lost it in g2,
    /// so in g3 it follows the default, whether carried in one pass or one reload at a time.
    @Test func aGroupDroppedInAChainStaysDroppedWhenItsIdComesBack() throws {
        let g1 = try makeMenu(Self.base)
        let g2 = try makeMenu([Self.base[0], Self.base[1], Self.base[3]])
        let g3 = try makeMenu(Self.base)
        let state = try Self.state(of: g1, ["a": true, "c": true])
        let chain = [MenuTranslation(from: g1, to: g2), MenuTranslation(from: g2, to: g3)]
        let carried = state.carried(through: chain, onto: g3)
        #expect(carried.changedGroups(in: g3).map(\.id) == ["a"])
        let stepwise = state.carried(through: chain[..<1], onto: g2).carried(through: chain[1...], onto: g3)
        #expect(stepwise == carried)
        #expect(state.carried(through: [chain[0].followed(by: chain[1])], onto: g3) == carried)
        let reference = try Self.reference(Self.reference(state, from: g1, to: g2).state, from: g2, to: g3)
        try Self.expectSameView(carried, as: reference, "chain g1 → g2 → g3")
    }

    /// b is closed by the user in g1; g2 makes it closed by default (no longer changed); g3 makes
    /// it open by default again. A session rebased at each reload forgot b in g2, so b is open in
    /// g3; carrying through both tables at once must end there too, not at the user's old choice.
    @Test func aChainEndsWhereRebasingAtEachReloadWould() throws {
        let g1 = try makeMenu(Self.base)
        var closed = Self.base
        closed[1].expanded = false
        let g2 = try makeMenu(closed)
        let g3 = try makeMenu(Self.base)
        let state = try Self.state(of: g1, ["b": false, "c": true])
        let carried = state.carried(
            through: [MenuTranslation(from: g1, to: g2), MenuTranslation(from: g2, to: g3)], onto: g3)
        #expect(carried.changedGroups(in: g3).map(\.id) == ["c"])
        #expect(FlattenedView(menu: g3, state: carried).isExpanded(g3.node(withID: "b")!))
        let composed = MenuTranslation(from: g1, to: g2).followed(by: MenuTranslation(from: g2, to: g3))
        #expect(state.carried(through: [composed], onto: g3) == carried)
        #expect(composed.fromNodeCount == g1.nodeCount && composed.toVersion == g3.version)
    }

    @Test func aTranslationMapsItsMenusNodeCountsAndCostsFourBytesAnOldNode() throws {
        let old = try makeMenu(Self.base)
        let new = try makeMenu([Self.base[0], Self.base[3]])
        let translation = MenuTranslation(from: old, to: new)
        #expect(translation.fromNodeCount == old.nodeCount && translation.toNodeCount == new.nodeCount)
        #expect(translation.fromVersion == old.version && translation.toVersion == new.version)
        #expect(translation.memoryBytes >= 4 * old.nodeCount && translation.memoryBytes < 4 * old.nodeCount + 64)
    }

    /// Sessions may wait for their rebase long after a reload: the table must not hold the old menu.
    @Test func aTranslationKeepsNeitherMenuAlive() throws {
        weak var oldStorage: Menu.Storage?
        weak var newStorage: Menu.Storage?
        var translation: MenuTranslation?
        do {
            let old = try makeMenu(Self.base)
            let new = try makeMenu([Self.base[1]])
            oldStorage = old.storage
            newStorage = new.storage
            translation = MenuTranslation(from: old, to: new)
        }
        #expect(translation?.fromNodeCount == 14)
        #expect(oldStorage == nil && newStorage == nil)
    }

    @Test func carryingThroughNoTranslationsKeepsTheState() throws {
        let menu = try makeMenu(Self.base)
        let state = try Self.state(of: menu, ["a": true, "b1": true])
        #expect(state.carried(through: [], onto: menu) == state)
    }

    // MARK: Randomized, against the reference

    /// 40 random menu pairs per seed (320 in all): a random tree, 1 to 8 random edits
    /// (``MenuEdits``), a random state of up to 20 toggles; every fourth pair is a chain of three
    /// menus, carried in one pass and checked against the reference applied reload by reload, and
    /// through the chain's composed table.
    @Test(arguments: 0 ..< 8 as Range<UInt64>)
    func randomEditsCarryAsTheReferenceDoes(seed: UInt64) throws {
        var rng = SplitMix64(state: 0x7AB1E ^ seed &* 0x9E37_79B9_7F4A_7C15)
        for pair in 0 ..< 40 {
            var edits = MenuEdits(randomTree(nodes: Int.random(in: 0 ... 80, using: &rng), maxDepth: 4, using: &rng))
            var menus = [try makeMenu(edits.items)]
            for _ in 0 ..< (pair % 4 == 3 ? 2 : 1) {
                edits.applyRandom(Int.random(in: 1 ... 8, using: &rng), using: &rng)
                menus.append(try makeMenu(edits.items))
            }
            let context = "seed \(seed), pair \(pair): \(edits.log.joined(separator: "; "))"
            var view = FlattenedView(menu: menus[0])
            let groups = menus[0].nodes.filter(menus[0].isGroup).map(menus[0].id(of:))
            for _ in 0 ..< Int.random(in: 0 ... 20, using: &rng) {
                if let id = groups.randomElement(using: &rng) { _ = try view.toggle(id) }
            }
            let translations = zip(menus, menus.dropFirst()).map { MenuTranslation(from: $0, to: $1) }
            let carried = view.state.carried(through: translations, onto: menus.last!)
            var reference = view
            for (old, new) in zip(menus, menus.dropFirst()) {
                reference = try Self.reference(reference.state, from: old, to: new)
            }
            try Self.expectSameView(carried, as: reference, context)
            let composed = translations.dropFirst().reduce(translations[0]) { $0.followed(by: $1) }
            #expect(view.state.carried(through: [composed], onto: menus.last!) == carried, "composed; \(context)")
        }
    }

    /// The differential tests' hard shapes: groups of thousands of children with hundreds of them
    /// changed (long runs of running sums to rebuild), and chains down to the 64-level limit.
    @Test(arguments: ["groups of thousands of children", "chains down to the 64-level limit"])
    func hardShapesCarryAsTheReferenceDoes(shape: String) throws {
        for run in 0 ..< 2 as Range<UInt64> {
            var rng = SplitMix64(state: 0x5A4E ^ run)
            let wide = shape.hasPrefix("groups")
            var edits = MenuEdits(
                wide ? DifferentialTests.wideTree(using: &rng) : DifferentialTests.deepChains(using: &rng))
            let old = try makeMenu(edits.items)
            edits.applyRandom(12, using: &rng)
            let new = try makeMenu(edits.items)
            var view = FlattenedView(menu: old)
            let groups = old.nodes.filter(old.isGroup).map(old.id(of:))
            for _ in 0 ..< (wide ? 600 : 120) { _ = try view.toggle(groups.randomElement(using: &rng)!) }
            let carried = view.state.carried(through: [MenuTranslation(from: old, to: new)], onto: new)
            try Self.expectSameView(
                carried, as: Self.reference(view.state, from: old, to: new),
                "\(shape), run \(run): \(edits.log.joined(separator: "; "))")
        }
    }

    // MARK: Helpers

    /// A state of `menu` with `choices` applied by id.
    static func state(of menu: Menu, _ choices: [String: Bool]) throws -> SessionState {
        var view = FlattenedView(menu: menu)
        for (id, expanded) in choices.sorted(by: { $0.key < $1.key }) { _ = try view.setExpanded(id, expanded) }
        return view.state
    }

    /// The contract from scratch: `state`'s changed groups and their explicit state, by id, set one
    /// by one on a fresh view of `new` where the id names a group.
    static func reference(_ state: SessionState, from old: Menu, to new: Menu) throws -> FlattenedView {
        var view = FlattenedView(menu: new)
        for (id, expanded) in state.changedGroups(in: old) {
            guard let node = new.node(withID: id), new.isGroup(node) else { continue }
            _ = try view.setExpanded(id, expanded)
        }
        return view
    }

    /// Each level's entries as (node, running rows, running leaves).
    static func overlay(_ state: SessionState) -> [[[Int32]]] {
        state.levels.map { $0.map { [$0.node, $0.rows, $0.leaves] } }
    }

    /// `carried` on the reference's menu shows exactly what the reference shows.
    static func expectSameView(
        _ carried: SessionState, as reference: FlattenedView, _ context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let menu = reference.menu
        let view = FlattenedView(menu: menu, state: carried)
        #expect(carried == reference.state, "changed groups; \(context)", sourceLocation: sourceLocation)
        #expect(overlay(carried) == overlay(reference.state), "overlay; \(context)", sourceLocation: sourceLocation)
        #expect(
            view.count == reference.count && view.leafCount == reference.leafCount,
            "counts \(view.count)/\(view.leafCount), reference \(reference.count)/\(reference.leafCount); \(context)",
            sourceLocation: sourceLocation)
        guard view.count == reference.count else { return }  // reading pages of a miscounted view may trap
        #expect(
            view.rows(offset: 0, limit: view.count + 1) == reference.rows(offset: 0, limit: reference.count + 1),
            "rows; \(context)", sourceLocation: sourceLocation)
        for offset in stride(from: 0, to: view.count, by: max(3, view.count / 500)) {  // ~500 pages at most
            #expect(
                view.rows(offset: offset, limit: 4) == reference.rows(offset: offset, limit: 4),
                "page at \(offset); \(context)", sourceLocation: sourceLocation)
        }
        for node in menu.nodes {
            let id = menu.id(of: node)
            #expect(
                view.index(of: id) == reference.index(of: id), "index of \(id); \(context)",
                sourceLocation: sourceLocation)
        }
    }
}
