import MenuModel
import NaiveReference

/// What the table measures, on the model and on the naive reference alike.
enum Operation: CaseIterable {
    case rows, visibleNodes, count, toggle, index

    var label: String {
        switch self {
        case .rows: "rows(offset:limit: 50)"
        case .visibleNodes: "page of 50 positions (forEachVisibleNode: the server's path)"
        case .count: "count"
        case .toggle: "toggle (a group, then back: 2 ops)"
        case .index: "index(of:) random id"
        }
    }
}

/// One session's expansion and the random arguments every measured call draws from (cycled),
/// the same for the model and the naive reference. There are enough of them that the calls on the
/// 1.1M menu touch more memory than the caches hold, as a server's many sessions would: with 1,024
/// inputs the 1.1M figures come out 2-4× lower (warm caches).
struct Session {
    static let pageSize = 50
    /// The default number of cycled inputs: cold caches on the 1.1M menu.
    static let defaultInputCount = 1 << 16

    /// How many random inputs the calls cycle through (a power of two).
    let inputCount: Int
    var mask: Int { inputCount - 1 }

    /// Groups this session toggled away from the default, in toggle order.
    let changedGroups: [String]
    let offsets: [Int]
    let groupIDs: [String]
    let anyIDs: [String]

    /// Toggles `changes` distinct random groups (fewer when the menu has fewer) in `view`.
    init(menu: Menu, view: inout FlattenedView, changes: Int, seed: UInt64, inputCount: Int = Session.defaultInputCount)
    {
        precondition(inputCount > 0 && inputCount & (inputCount - 1) == 0, "inputCount must be a power of two")
        self.inputCount = inputCount
        var rng = SplitMix64(state: seed)
        let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
        changedGroups = Array(groups.shuffled(using: &rng).prefix(changes))
        for id in changedGroups { _ = try! view.toggle(id) }
        let lastPage = max(0, view.count - Self.pageSize)
        offsets = (0 ..< inputCount).map { _ in Int.random(in: 0 ... lastPage, using: &rng) }
        groupIDs = (0 ..< inputCount).map { _ in groups.randomElement(using: &rng)! }
        anyIDs = (0 ..< inputCount).map { _ in menu.id(of: Int.random(in: menu.nodes, using: &rng)) }
    }
}

/// The model's side: the calls the server makes, on one ``FlattenedView``.
enum ModelRunner {
    static func measure(_ operation: Operation, view start: FlattenedView, session: Session, plan: TimingPlan) -> Double
    {
        let mask = session.mask
        // Read-only calls capture a constant: a captured variable would add an exclusivity check per call.
        let view = start
        switch operation {
        case .rows:
            return plan.nanosecondsPerOp { i in
                view.rows(offset: session.offsets[i & mask], limit: Session.pageSize)
                    .reduce(0) { $0 &+ $1.index &+ $1.id.utf8.count }
            }
        case .visibleNodes:
            return plan.nanosecondsPerOp { i in
                var sum = 0
                view.forEachVisibleNode(offset: session.offsets[i & mask], limit: Session.pageSize) { sum &+= $0.node }
                return sum
            }
        case .count:
            return plan.nanosecondsPerOp { _ in view.count }
        case .toggle:
            var view = start
            return plan.nanosecondsPerOp(opsPerCall: 2) { i in
                let id = session.groupIDs[i & mask]
                let there = try! view.toggle(id)
                let back = try! view.toggle(id)
                return (there.index ?? 0) &+ (back.change?.inserted ?? 0)
            }
        case .index:
            return plan.nanosecondsPerOp { i in view.index(of: session.anyIDs[i & mask]) ?? -1 }
        }
    }
}
