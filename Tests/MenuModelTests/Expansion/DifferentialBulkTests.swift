import Testing

@testable import MenuModel

/// Expand all, collapse all, reset and the recursive changes, mixed with toggles and plain sets,
/// against the seeds' naive walk (``NaiveMenu``, which visits every group a bulk change affects):
/// after every step the change object, the counts, every row's position, node and expansion (and
/// every field on the pages and, on small tables, of every row) and `index(of:)` must agree, on
/// the four shapes of ``DifferentialTests``. After every step the state must also equal, overlay
/// and all, the state rebuilt in one pass from its ``PortableState`` (the incremental overlay
/// is the one the definition gives).
///
/// Seeds are random on each run and printed with every failure; set `MENU_DIFFERENTIAL_SEED` to
/// replay one.
@Suite struct DifferentialBulkTests {
    @Test(arguments: DifferentialTests.shapes)
    func bulkChangesMixedWithTogglesMatchTheNaiveWalkAfterEveryStep(shape: DifferentialTests.Shape) throws {
        for run in 0 ..< UInt64(shape.runs) {
            try checkRun(shape, seed: DifferentialTests.baseSeed &+ run &+ 1_000)
        }
    }

    func checkRun(_ shape: DifferentialTests.Shape, seed: UInt64) throws {
        var rng = SplitMix64(state: seed)
        let spec = shape.make(&rng)
        let menu = try makeMenu(spec)
        let context = "shape \"\(shape.name)\", seed \(seed) (MENU_DIFFERENTIAL_SEED=\(DifferentialTests.baseSeed))"
        var view = FlattenedView(menu: menu)
        var naive = NaiveMenu(spec: spec)
        let items = naive.preorder()
        let groupIDs = items.filter(\.isGroup).map(\.id)
        let allIDs = items.map(\.id)
        let nodeOfID = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0.ordinal) })
        try #require(!groupIDs.isEmpty, "\(context)")
        // Bulk steps make large tables: twice the steps of the toggle-only test, fields in full on
        // every step for tables up to 2,000 rows, every fifth step beyond.
        for step in 0 ..< shape.steps * 2 {
            let dice = Int.random(in: 0 ..< 100, using: &rng)
            let id = groupIDs.randomElement(using: &rng)!
            let target = Bool.random(using: &rng)
            let operation: String
            var problem: String?
            switch dice {
            case ..<10:
                let mode = ExpansionMode.allCases.randomElement(using: &rng)!
                operation = "setAll(\(mode))"
                let change = view.setAll(mode)
                let expected = naive.setAll(mode)
                if change != expected { problem = "\(change), oracle \(expected)" }
                if view.state.changedGroupCount != 0 || view.state.overlayEntryCount != 0 {
                    problem =
                        "the state holds \(view.state.changedGroupCount) groups and \(view.state.overlayEntryCount) entries"
                }
            case ..<45:
                operation = "setExpanded(\(id), \(target), recursive: true)"
                let change = try view.setExpanded(id, target, recursive: true)
                let expected = naive.setExpandedRecursively(id, target)
                if change != expected { problem = "\(change), oracle \(String(describing: expected))" }
            case ..<75:
                operation = "toggle(\(id))"
                let expected = naive.setExpanded(id, !naive.item(withID: id)!.isExpand)
                let change = try view.toggle(id)
                if change != expected { problem = "\(change), oracle \(String(describing: expected))" }
            default:
                operation = "setExpanded(\(id), \(target))"
                let expected = naive.setExpanded(id, target)
                let change = try view.setExpanded(id, target)
                if change != expected { problem = "\(change), oracle \(String(describing: expected))" }
            }
            if problem == nil {
                let table = DifferentialTests.Table(naive, nodeCount: items.count)
                let probes = (0 ..< 24).map { _ in allIDs.randomElement(using: &rng)! } + [id]
                problem = DifferentialTests.difference(
                    view, table, nodeOfID: nodeOfID,
                    wholeRows: table.rows.count <= 2_000 || step % 5 == 0,
                    eachRowAlone: table.rows.count <= 2_000 && step % 5 == 0,
                    probes: probes, using: &rng)
            }
            if problem == nil { problem = Self.differenceFromRebuilt(view.state, in: menu) }
            if let problem {
                Issue.record("\(context), step \(step), \(operation): \(problem)")
                return
            }
        }
    }

    /// What differs between `state` and the state rebuilt in one pass from its portable form (nil:
    /// nothing): base, marks, flips and every overlay entry.
    static func differenceFromRebuilt(_ state: SessionState, in menu: Menu) -> String? {
        var ignored: [String] = []
        let rebuilt = SessionState(portable: state.portable(in: menu), in: menu, ignoredIDs: &ignored)
        if !ignored.isEmpty { return "the portable form names ids the menu lacks: \(ignored)" }
        if rebuilt != state { return "the state differs from the one rebuilt from its portable form" }
        if MenuTranslationTests.overlay(rebuilt) != MenuTranslationTests.overlay(state) {
            return
                "the overlay \(MenuTranslationTests.overlay(state)) differs from the one built in one pass \(MenuTranslationTests.overlay(rebuilt))"
        }
        if rebuilt.marks.map(\.end) != state.marks.map(\.end) {
            return "the marks' subtree ends differ from the rebuilt ones"
        }
        return nil
    }
}
