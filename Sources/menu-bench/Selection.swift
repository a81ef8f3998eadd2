import Foundation
import MenuModel

/// `menu-bench --selection FILE` (issue 28 §5, the model's part): on the menu of FILE, without a
/// socket:
/// - select-all and clear-all (``SelectionState/setAll(_:)``): time, and the bytes the state holds;
/// - selecting a whole top-level group, and one leaf, on a state with 1,000 leaves toggled;
/// - a row's count (``SelectionState/selectedCount(in:of:)``) and a leaf's state, the per-row
///   cost a page with selection pays, on that state;
/// - a page of 50 selected ids in menu order from the middle.
enum SelectionFigures {
    static func measure(_ path: String, plan: TimingPlan) throws -> String {
        let menu = try Menu(contentsOfFile: path)
        let groups = menu.nodes.filter(menu.isGroup)
        let leaves = menu.nodes.filter { !menu.isGroup($0) }
        var rng = SystemRandomNumberGenerator()
        let topGroup = try groups.first { menu.depth(of: $0) == 0 } ?? { throw BenchError.childFailed("no group") }()

        var everything = SelectionState()
        let allTime = plan.nanosecondsPerOp { iteration in everything.setAll(iteration % 2 == 0) ? 1 : 0 }
        everything.setAll(true)
        let allBytes = everything.heapBytes
        guard everything.selectedCount(of: menu) == leaves.count else {
            throw BenchError.childFailed("select-all selected \(everything.selectedCount(of: menu)) of \(leaves.count)")
        }

        var busy = SelectionState()
        for _ in 0 ..< 1_000 { busy.set(leaves.randomElement(using: &rng)!, selected: true, in: menu) }
        let toggles = busy.toggleCount
        let someGroups = (0 ..< 4_096).map { _ in groups.randomElement(using: &rng)! }
        let someLeaves = (0 ..< 4_096).map { _ in leaves.randomElement(using: &rng)! }
        let groupTime = plan.nanosecondsPerOp { iteration in
            var state = busy
            return state.set(topGroup, selected: iteration % 2 == 0, in: menu) ? 1 : 0
        }
        let leafTime = plan.nanosecondsPerOp { iteration in
            var state = busy
            return state.set(someLeaves[iteration % someLeaves.count], selected: true, in: menu) ? 1 : 0
        }
        let countTime = plan.nanosecondsPerOp { iteration in
            busy.selectedCount(in: someGroups[iteration % someGroups.count], of: menu)
        }
        let leafStateTime = plan.nanosecondsPerOp { iteration in
            busy.isSelected(someLeaves[iteration % someLeaves.count], in: menu) ? 1 : 0
        }
        let middle = busy.selectedCount(of: menu) / 2
        let pageTime = plan.nanosecondsPerOp { _ in busy.selectedLeaves(in: menu, offset: middle, limit: 50).count }
        return
            "| select-all, clear-all (\(menu.nodeCount) nodes, \(leaves.count) leaves) | \(Report.time(allTime)) | \(allBytes) B held after select-all |"
            + "\n| select a top-level group (\(menu.leafCount(of: topGroup)) leaves) on a state of \(toggles) toggles, its arrays copied first (a session's write copies them too) | \(Report.time(groupTime)) | |"
            + "\n| select one leaf on that state, copied first | \(Report.time(leafTime)) | \(busy.heapBytes) B held |"
            + "\n| a group's selected count on that state (a row's cost) | \(Report.time(countTime)) | |"
            + "\n| a leaf's state on that state | \(Report.time(leafStateTime)) | |"
            + "\n| 50 selected ids from the middle, in menu order | \(Report.time(pageTime)) | |"
    }
}
