extension ExpansionState {
    /// The state of `menu` in which exactly `flippedGroups` (ascending, distinct groups of `menu`)
    /// differ from the default, built in one pass: the same state as flipping them one by one with
    /// ``FlattenedView/setExpanded(node:_:)``, without its per-flip inserts and sibling shifts.
    ///
    /// A node's overlay entry is its visible size in the session minus its default size, where a
    /// collapsed group shows 1 row (itself) and 0 leaves and an expanded one itself plus its
    /// children's sizes, whatever its ancestors' states. Only the groups and their ancestors can
    /// differ, so the pass keeps the path from the top level down to the current group, each node
    /// with the sum of its finished children's differences; a node is finished (its entry written)
    /// when the next group lies outside its subtree. Nodes finish in postorder, so each level's
    /// entries come out ascending and a group's children contiguous, as the running sums need.
    ///
    /// Cost: O(k · d) for k groups at depth up to d: each node on their paths is pushed and
    /// finished once.
    init(flippedGroups: [Int32], in menu: Menu) {
        self.init()
        flipped = flippedGroups
        let storage = menu.storage
        // The path down to the last group: node, whether it is flipped, sums of its children's differences.
        var path: [(node: Int32, isFlipped: Bool, rows: Int32, leaves: Int32)] = []
        var chain: [Int32] = []
        func finishLast() {
            let (node, isFlipped, childRows, childLeaves) = path.removeLast()
            let record = storage.records[Int(node)]
            let byDefault = record.flags & Menu.Storage.expandedFlag != 0
            let open = (rows: storage.openRows[Int(node)], leaves: storage.openLeaves[Int(node)])
            let session = byDefault != isFlipped ? (open.rows + childRows, open.leaves + childLeaves) : (1, 0)
            let rows = session.0 - (byDefault ? open.rows : 1)
            let leaves = session.1 - (byDefault ? open.leaves : 0)
            guard rows != 0 || leaves != 0 else { return }
            let depth = Int(record.depth)
            if levels.count <= depth { levels.append(contentsOf: repeatElement([], count: depth + 1 - levels.count)) }
            // Running sums restart at each parent: an earlier entry after the parent is a sibling.
            let sibling = levels[depth].last.flatMap { $0.node > record.parent ? $0 : nil }
            levels[depth].append(OverlayEntry(node: node, rows: rows + (sibling?.rows ?? 0), leaves: leaves + (sibling?.leaves ?? 0)))
            if !path.isEmpty {
                path[path.count - 1].rows += rows
                path[path.count - 1].leaves += leaves
            }
        }
        for group in flippedGroups {
            while let last = path.last, storage.records[Int(last.node)].subtreeEnd <= group { finishLast() }
            // The group's ancestors below the path's end are new to the path; none of them is flipped
            // (a flipped ancestor comes earlier in preorder, so it is on the path already).
            let top = path.last?.node ?? 0
            chain.removeAll(keepingCapacity: true)
            var ancestor = storage.records[Int(group)].parent
            while ancestor != top {
                chain.append(ancestor)
                ancestor = storage.records[Int(ancestor)].parent
            }
            for node in chain.reversed() { path.append((node, false, 0, 0)) }
            path.append((group, true, 0, 0))
        }
        while !path.isEmpty { finishLast() }
    }
}
