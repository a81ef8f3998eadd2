import Foundation
import MenuModel
import NaiveReference

/// A reload's cost for sessions: building the ``MenuTranslation`` between the 1.1M-node synthetic
/// menu and an edited copy, its size, and carrying states of 10 to 10,000 changed groups through it
/// (against re-applying the same choices by id on a fresh view, what a store without it would do).
enum TranslationFigures {
    static let changeCounts = [10, 1_000, 10_000]

    static func measure(plan: TimingPlan) throws -> String {
        progress("translation: generating and loading two 1.1M-node menus")
        let spec = SyntheticMenu.spec(.large)
        let old = try Menu(jsonData: Data(SyntheticMenu.json(spec, title: "Synthetic 1.1M")))
        let new = try Menu(jsonData: Data(SyntheticMenu.json(edited(spec), title: "Synthetic 1.1M, edited")))
        progress("translation: building")
        var translation = MenuTranslation(from: old, to: new)
        let runs = max(3, plan.rounds)
        let build = TimingPlan.medianCPUNanoseconds(runs: runs) { translation = MenuTranslation(from: old, to: new) }
        // A reload back to the old menu, composed with this one: what a store folding two reloads pays.
        let back = MenuTranslation(from: new, to: old)
        let composition = TimingPlan.medianCPUNanoseconds(runs: runs) {
            precondition(translation.followed(by: back).fromNodeCount == old.nodeCount)
        }
        var lines = [
            "MenuTranslation from \(old.nodeCount) to \(new.nodeCount) nodes: built in \(Report.time(build)) "
                + "(median of \(runs), thread CPU), \(translation.memoryBytes) bytes; composed with the reload back "
                + "(`followed(by:)`) in \(Report.time(composition)).",
            "",
            "| changed groups | carried (still changed) | carried(through:onto:) | by id on a fresh view |",
            "|---:|---:|---:|---:|"
        ]
        let groups = old.nodes.filter(old.isGroup).map(old.id(of:))
        for changes in changeCounts {
            var rng = SplitMix64(state: UInt64(changes))
            var view = FlattenedView(menu: old)
            for id in groups.shuffled(using: &rng).prefix(changes) { _ = try view.toggle(id) }
            let state = view.state
            let byID = state.changedGroups(in: old)
            func reference() -> SessionState {
                var fresh = FlattenedView(menu: new)
                for (id, expanded) in byID { _ = try? fresh.setExpanded(id, expanded) }
                return fresh.state
            }
            let carried = state.carried(through: [translation], onto: new)
            precondition(carried == reference(), "the carried state differs from the reference")
            progress("translation: carrying \(changes) changed groups")
            let carry = plan.nanosecondsPerOp { _ in state.carried(through: [translation], onto: new).changedGroupCount
            }
            let fromScratch = plan.nanosecondsPerOp { _ in reference().changedGroupCount }
            lines.append(
                "| \(state.changedGroupCount) | \(carried.changedGroupCount) | \(Report.time(carry)) | \(Report.time(fromScratch)) |"
            )
        }
        lines += ["", try listingDiffs(old, spec: spec, plan: plan)]
        return lines.joined(separator: "\n")
    }

    /// Issue 26 §2's core: ``ListingDiff/between(_:_:)`` from a session's rows on the 1.1M menu to
    /// its rows once one dish is added (the default view, and everything expanded), timed.
    static func listingDiffs(_ old: Menu, spec: [TreeSpec], plan: TimingPlan) throws -> String {
        progress("translation: one dish added, listing diffs")
        var items = spec
        items[0].children!.insert(.row("added-dish", "Added dish"), at: 1)
        let new = try Menu(jsonData: Data(SyntheticMenu.json(items, title: "Synthetic 1.1M, one dish added")))
        let translation = MenuTranslation(from: old, to: new)
        var lines = ["| session | rows | ListingDiff.between | splices | reconfigured |", "|---|---:|---:|---:|---:|"]
        var expanded = FlattenedView(menu: old)
        _ = expanded.setAll(.expanded)
        for (name, view) in [("default view", FlattenedView(menu: old)), ("all expanded", expanded)] {
            let carried = FlattenedView(menu: new, state: view.state.carried(through: [translation], onto: new))
            var diff = ListingDiff.between(view, carried)
            let time = TimingPlan.medianCPUNanoseconds(runs: max(3, plan.rounds)) {
                diff = ListingDiff.between(view, carried)
            }
            lines.append(
                "| \(name) | \(view.count) → \(carried.count) | \(Report.time(time)) | \(diff.changes.count) "
                    + "| \(diff.reconfigured.count) |")
        }
        return lines.joined(separator: "\n")
    }

    /// The synthetic menu after a reload's worth of edits: every 10th group's default flipped,
    /// every 97th group turned into a row (its rows gone), the last subtree of the first top-level
    /// group deleted, the first subtree of the second moved one level down under the third, and a
    /// new row at the top.
    static func edited(_ spec: [TreeSpec]) -> [TreeSpec] {
        var counter = 0
        func edit(_ item: TreeSpec) -> TreeSpec {
            guard let children = item.children else { return item }
            counter += 1
            if counter % 97 == 0 { return .row(item.id, item.title) }
            var group = item
            if counter % 10 == 0 { group.expanded.toggle() }
            group.children = children.map(edit)
            return group
        }
        var items = spec.map(edit)
        items[0].children!.removeLast()
        let moved = items[1].children!.removeFirst()
        items[2].children![0].children!.append(moved)
        items.insert(.row("new-row", "New"), at: 0)
        return items
    }
}
