import Foundation
import MenuModel
import NaiveReference

/// Expand all on the 1.1M-node synthetic menu: what it costs, what the state holds, and a page of
/// 50 rows at deep offsets in the expanded view (with nothing else changed: one lookup finds the
/// first row; with a recursive collapse and 100 toggles on top: the descent through the groups)
/// against the same page in the default view.
enum BulkFigures {
    static func measure(plan: TimingPlan) throws -> String {
        progress("bulk: generating and loading the 1.1M-node menu")
        let menu = try Menu(jsonData: Data(SyntheticMenu.json(SyntheticMenu.spec(.large), title: "Synthetic 1.1M")))
        var expanded = FlattenedView(menu: menu)
        let expandAll = plan.nanosecondsPerOp { i in
            var view = expanded
            return view.setAll(i & 1 == 0 ? .expanded : .collapsed).change.inserted
        }
        expanded.setAll(.expanded)
        var changed = expanded
        var rng = SplitMix64(state: 13)
        let groups = menu.nodes.filter(menu.isGroup)
        _ = try changed.setExpanded(menu.id(of: groups[groups.count / 3]), false, recursive: true)
        for _ in 0 ..< 100 { _ = try changed.toggle(menu.id(of: groups.randomElement(using: &rng)!)) }
        func page(_ view: FlattenedView) -> Double {
            let offsets = (0 ..< 64).map { view.count - 50 - $0 * (view.count / 128) }
            return plan.nanosecondsPerOp { i in
                var sum = 0
                view.forEachVisibleNode(offset: offsets[i & 63], limit: 50) { sum &+= $0.node }
                return sum
            }
        }
        progress("bulk: pages")
        let state = changed.state
        return """
            Expand all (setAll, alternating with collapse all) on \(menu.nodeCount) nodes: \(Report.time(expandAll)) per call; \
            the state afterwards holds \(expanded.state.changedGroupCount) groups and \(expanded.state.overlayEntryCount) overlay entries.

            | view (page of 50 at offsets in the second half) | rows | state: groups + marks / overlay entries | page |
            |---|---:|---:|---:|
            | default | \(FlattenedView(menu: menu).count) | 0 / 0 | \(Report.time(page(FlattenedView(menu: menu)))) |
            | expanded all | \(expanded.count) | 0 / 0 | \(Report.time(page(expanded))) |
            | expanded all, one subtree collapsed recursively, 100 toggles | \(changed.count) | \(state.changedGroupCount) / \(state.overlayEntryCount) | \(Report.time(page(changed))) |
            """
    }
}
