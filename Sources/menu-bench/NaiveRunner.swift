import MenuModel
import NaiveReference

/// The naive side: the same operations on the seeds' tree (``NaiveMenu``), whose every call walks
/// the tree, so big menus get few iterations per round.
struct NaiveRunner {
    private(set) var menu: NaiveMenu

    init(spec: [TreeSpec]) {
        menu = NaiveMenu(spec: spec)
    }

    /// Flips every group of the session; calling it again restores the default.
    func flip(_ session: Session) {
        for id in session.changedGroups { menu.item(withID: id)!.isExpand.toggle() }
    }

    /// Fails loudly when the reference and the model disagree on this session.
    func check(against view: FlattenedView, session: Session) {
        precondition(menu.count == view.count, "naive count \(menu.count) != model count \(view.count)")
        let offset = session.offsets[0]
        let expected = menu.rows(offset: offset, limit: Session.pageSize).map(\.item.id)
        precondition(
            view.rows(offset: offset, limit: Session.pageSize).map(\.id) == expected, "pages differ at \(offset)")
        for id in session.anyIDs.prefix(8) {
            precondition(menu.index(of: id) == view.index(of: id), "index(of: \(id)) differs")
        }
    }

    /// `visibleNodes` has no naive twin: it is the naive `rows`.
    func measure(_ operation: Operation, session: Session, plan: TimingPlan) -> Double {
        let mask = session.mask
        var menu = self.menu
        switch operation {
        case .rows, .visibleNodes:
            return plan.nanosecondsPerOp { i in
                menu.rows(offset: session.offsets[i & mask], limit: Session.pageSize)
                    .reduce(0) { $0 &+ $1.index &+ $1.item.id.utf8.count }
            }
        case .count:
            return plan.nanosecondsPerOp { _ in menu.count }
        case .toggle:
            return plan.nanosecondsPerOp(opsPerCall: 2) { i in
                let id = session.groupIDs[i & mask]
                let item = menu.item(withID: id)!
                let there = menu.setExpanded(id, !item.isExpand)
                let back = menu.setExpanded(id, !item.isExpand)
                return (there?.index ?? 0) &+ (back?.change?.inserted ?? 0)
            }
        case .index:
            return plan.nanosecondsPerOp { i in menu.index(of: session.anyIDs[i & mask]) ?? -1 }
        }
    }
}
