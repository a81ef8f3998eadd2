/// Visible sizes under each ``ExpansionMode`` with nothing flipped, in O(1) from the frozen arrays:
/// the reference sizes a session's overlay is relative to (see ``SessionState``).
extension Menu.Storage {
    /// Rows and leaf rows `group`'s children show together when each follows `mode` throughout
    /// its subtree. The root (0) counts as a group.
    @inline(__always) func childrenSize(of group: Int, mode: ExpansionMode) -> (rows: Int32, leaves: Int32) {
        switch mode {
        case .default: return (openRows[group] - 1, openLeaves[group])
        case .expanded:
            let end = Int(records[group].subtreeEnd)
            return (Int32(end - group - 1), leavesBefore[end] - leavesBefore[group])
        case .collapsed: return (records[group].childCount, leafChildren[group])
        }
    }

    /// Rows (itself included) and leaf rows `node` shows when every group of its subtree, itself
    /// included, follows `mode`.
    @inline(__always) func size(of node: Int, mode: ExpansionMode) -> (rows: Int32, leaves: Int32) {
        let flags = records[node].flags
        guard flags & Self.groupFlag != 0 else { return (1, 1) }
        guard mode.expands(flags: flags) else { return (1, 0) }
        let children = childrenSize(of: node, mode: mode)
        return (children.rows + 1, children.leaves)
    }

    /// Rows the left siblings of `group`'s child `entry` (its `ordinal`-th) show when each follows
    /// `mode` throughout.
    @inline(__always) func siblingPrefix(of entry: Menu.ChildEntry, ordinal: Int, in group: Int, mode: ExpansionMode)
        -> Int32
    {
        switch mode {
        case .default: entry.siblingPrefix
        case .expanded: entry.node - Int32(group) - 1
        case .collapsed: Int32(ordinal)
        }
    }

    /// `child`'s ordinal among its parent `group`'s children: one binary search (children ascend).
    func ordinal(of child: Int, in group: Int) -> Int {
        let first = Int(records[group].firstChildSlot)
        var low = first
        var high = first + Int(records[group].childCount)
        while low < high {
            let mid = (low + high) / 2
            if Int(children[mid].node) < child { low = mid + 1 } else { high = mid }
        }
        return low - first
    }
}
