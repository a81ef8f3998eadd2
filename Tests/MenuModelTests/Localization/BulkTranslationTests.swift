import Testing

@testable import MenuModel

/// A state with a base mode, marks and flips carried through a reload of random edits
/// (``MenuEdits``) must equal, overlay and all, the reference built change by change on a fresh
/// view of the new menu from the old state's ``PortableState``: the base set, each mark whose
/// id still names a group set recursively (in the new menu's order, so outer marks first), then
/// each flipped group set to its explicit state. Without marks, a chain of reloads must equal the
/// reloads one by one.
@Suite struct BulkTranslationTests {
    /// A random state of bulk changes, toggles and sets on `menu`.
    static func randomState(on menu: Menu, steps: Int, using rng: inout SplitMix64) throws -> SessionState {
        var view = FlattenedView(menu: menu)
        let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
        guard !groups.isEmpty else { return view.state }
        for _ in 0 ..< steps {
            let id = groups.randomElement(using: &rng)!
            switch Int.random(in: 0 ..< 10, using: &rng) {
            case 0: view.setAll(ExpansionMode.allCases.randomElement(using: &rng)!)
            case 1 ... 4: _ = try view.setExpanded(id, Bool.random(using: &rng), recursive: true)
            default: _ = try view.toggle(id)
            }
        }
        return view.state
    }

    /// The reference: `portable` applied change by change to a fresh view of `menu`.
    static func reference(_ portable: PortableState, on menu: Menu) throws -> FlattenedView {
        var view = FlattenedView(menu: menu)
        view.setAll(portable.base)
        let marks = portable.marks.compactMap { mark in
            menu.node(withID: mark.id).flatMap { menu.isGroup($0) ? ($0, mark.mode) : nil }
        }
        for (node, mode) in marks.sorted(by: { $0.0 < $1.0 }) {
            _ = try view.setExpanded(menu.id(of: node), mode == .expanded, recursive: true)
        }
        for flip in portable.flips {
            guard let node = menu.node(withID: flip.id), menu.isGroup(node) else { continue }
            _ = try view.setExpanded(flip.id, flip.isExpanded)
        }
        return view
    }

    @Test func aBulkStateCarriedThroughRandomEditsEqualsTheReferenceBuiltByID() throws {
        let seed = DifferentialTests.baseSeed &+ 77
        var rng = SplitMix64(state: seed)
        for pair in 0 ..< 150 {
            var edits = MenuEdits(randomTree(nodes: Int.random(in: 1 ... 80, using: &rng), maxDepth: 4, using: &rng))
            let old = try makeMenu(edits.items)
            let state = try Self.randomState(on: old, steps: Int.random(in: 0 ... 12, using: &rng), using: &rng)
            edits.applyRandom(Int.random(in: 1 ... 8, using: &rng), using: &rng)
            let new = try makeMenu(edits.items)
            let carried = state.carried(through: [MenuTranslation(from: old, to: new)], onto: new)
            let reference = try Self.reference(state.portable(in: old), on: new)
            let context =
                "seed \(seed) (MENU_DIFFERENTIAL_SEED=\(DifferentialTests.baseSeed)), pair \(pair), edits \(edits.log)"
            try MenuTranslationTests.expectSameView(carried, as: reference, context)
            if carried != reference.state { return }
        }
    }

    @Test func withoutMarksAChainOfReloadsEqualsTheReloadsOneByOne() throws {
        let seed = DifferentialTests.baseSeed &+ 78
        var rng = SplitMix64(state: seed)
        for chain in 0 ..< 60 {
            var edits = MenuEdits(randomTree(nodes: Int.random(in: 1 ... 60, using: &rng), maxDepth: 4, using: &rng))
            var menus = [try makeMenu(edits.items)]
            for _ in 0 ..< 3 {
                edits.applyRandom(Int.random(in: 1 ... 5, using: &rng), using: &rng)
                menus.append(try makeMenu(edits.items))
            }
            var view = FlattenedView(menu: menus[0])
            view.setAll(ExpansionMode.allCases.randomElement(using: &rng)!)
            for group in menus[0].nodes.filter(menus[0].isGroup).shuffled(using: &rng).prefix(6) {
                _ = try view.toggle(menus[0].id(of: group))
            }
            let translations = zip(menus, menus.dropFirst()).map { MenuTranslation(from: $0, to: $1) }
            var stepwise = view.state
            for (translation, menu) in zip(translations, menus.dropFirst()) {
                stepwise = stepwise.carried(through: [translation], onto: menu)
            }
            let atOnce = view.state.carried(through: translations, onto: menus[3])
            #expect(atOnce == stepwise, "seed \(seed), chain \(chain), edits \(edits.log)")
            #expect(
                MenuTranslationTests.overlay(atOnce) == MenuTranslationTests.overlay(stepwise),
                "seed \(seed), chain \(chain)")
        }
    }
}
