extension SessionState {
    /// The state of `menu` with base `base`, the marks `marks` and the groups of `explicit` in the
    /// given state, built in one pass: the same state as setting them one by one with
    /// ``FlattenedView``, without its per-change inserts and sibling shifts. `marks` and `explicit`
    /// are ascending, distinct groups of `menu`. A mark whose mode is already in force at its
    /// parent is not kept (it changes nothing); a group whose given state is its mode's is not
    /// flipped.
    ///
    /// A node's overlay entry is its visible size in the session minus its reference size (see
    /// ``SessionState``), where a collapsed group shows 1 row (itself) and 0 leaves and an
    /// expanded one itself plus its children's sizes, whatever its ancestors' states. Only the
    /// marked and flipped groups and their ancestors can differ, so the pass keeps the path from
    /// the top level down to the current group, each node with its mode and the sum of its
    /// finished children's differences; a node is finished (its entry written) when the next
    /// group lies outside its subtree. Nodes finish in postorder, so each level's entries come out
    /// ascending and a group's children contiguous, as the running sums need.
    ///
    /// Cost: O(k · d) for k groups at depth up to d: each node on their paths is pushed and
    /// finished once.
    init(
        base: ExpansionMode, marks: [(node: Int32, mode: ExpansionMode)], explicit: [(node: Int32, isExpanded: Bool)],
        in menu: Menu
    ) {
        self.init(base: base)
        let storage = menu.storage
        struct PathNode {
            var node: Int32
            var mode: ExpansionMode
            var context: ExpansionMode
            var isExpanded: Bool
            var rows: Int32 = 0
            var leaves: Int32 = 0
        }
        var path: [PathNode] = []
        var chain: [Int32] = []
        func finishLast() {
            let last = path.removeLast()
            let node = Int(last.node)
            let record = storage.records[node]
            var session: (rows: Int32, leaves: Int32) = (1, 0)
            if last.isExpanded {
                let children = storage.childrenSize(of: node, mode: last.mode)
                session = (1 + children.rows + last.rows, children.leaves + last.leaves)
            }
            let reference = storage.size(of: node, mode: last.context)
            let rows = session.rows - reference.rows
            let leaves = session.leaves - reference.leaves
            guard rows != 0 || leaves != 0 else { return }
            let depth = Int(record.depth)
            if levels.count <= depth { levels.append(contentsOf: repeatElement([], count: depth + 1 - levels.count)) }
            // Running sums restart at each parent: an earlier entry after the parent is a sibling.
            let sibling = levels[depth].last.flatMap { $0.node > record.parent ? $0 : nil }
            levels[depth].append(
                OverlayEntry(
                    node: last.node, rows: rows + (sibling?.rows ?? 0), leaves: leaves + (sibling?.leaves ?? 0)))
            if !path.isEmpty {
                path[path.count - 1].rows += rows
                path[path.count - 1].leaves += leaves
            }
        }
        var nextMark = 0
        var nextExplicit = 0
        while nextMark < marks.count || nextExplicit < explicit.count {
            let group = min(
                nextMark < marks.count ? marks[nextMark].node : .max,
                nextExplicit < explicit.count ? explicit[nextExplicit].node : .max)
            var markMode: ExpansionMode?
            if nextMark < marks.count && marks[nextMark].node == group {
                markMode = marks[nextMark].mode
                nextMark += 1
            }
            var given: Bool?
            if nextExplicit < explicit.count && explicit[nextExplicit].node == group {
                given = explicit[nextExplicit].isExpanded
                nextExplicit += 1
            }
            while let last = path.last, storage.records[Int(last.node)].subtreeEnd <= group { finishLast() }
            // The group's ancestors below the path's end are new to the path; none of them is marked
            // or given (such an ancestor comes earlier in preorder, so it is on the path already).
            let inherited = path.last?.mode ?? base
            let top = path.last?.node ?? 0
            chain.removeAll(keepingCapacity: true)
            var ancestor = storage.records[Int(group)].parent
            while ancestor != top {
                chain.append(ancestor)
                ancestor = storage.records[Int(ancestor)].parent
            }
            for node in chain.reversed() {
                path.append(
                    PathNode(
                        node: node, mode: inherited, context: inherited,
                        isExpanded: inherited.expands(flags: storage.records[Int(node)].flags)))
            }
            var mode = inherited
            if let markMode, markMode != inherited {
                mode = markMode
                self.marks.append(SubtreeMark(node: group, end: storage.records[Int(group)].subtreeEnd, mode: markMode))
            }
            let byMode = mode.expands(flags: storage.records[Int(group)].flags)
            let isExpanded = given ?? byMode
            if isExpanded != byMode { flipped.append(group) }
            path.append(PathNode(node: group, mode: mode, context: inherited, isExpanded: isExpanded))
        }
        while !path.isEmpty { finishLast() }
    }
}
