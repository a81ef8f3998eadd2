/// Expand all, collapse all, reset, and the recursive forms: each a constant amount of state (a
/// new base, or one mark), never one entry per group affected (see ``SessionState``).
extension FlattenedView {
    /// Sets the whole session to `mode`: every mark and flip is forgotten, so every group follows
    /// `mode` (`.default`: the config's defaults, the state of a new session). The change is the
    /// whole table as one splice: `at` 0, `removed` the rows before, `inserted` the rows after.
    /// O(1) (plus freeing the old state); the state afterwards holds no entries.
    @discardableResult
    public mutating func setAll(_ mode: ExpansionMode) -> ExpansionResetChange {
        let before = count
        state = state.withExpansion(mode)
        return ExpansionResetChange(mode: mode, change: RowChange(at: 0, inserted: count, removed: before))
    }

    /// ``setExpanded(_:_:recursive:)`` with `recursive`, on a group's node.
    mutating func setExpanded(node: Menu.Node, _ expanded: Bool, recursive: Bool) -> ExpansionChange {
        withUnsafeTemporaryAllocation(of: PathStep.self, capacity: max(menu.height, 1)) { buffer in
            setSubtree(node: node, expanded, path: fillAncestry(of: node, into: buffer))
        }
    }

    private mutating func setSubtree(node: Menu.Node, _ expanded: Bool, path: UnsafeMutableBufferPointer<PathStep>)
        -> ExpansionChange
    {
        let index = index(along: path)
        let old = isExpanded(node, mode: path[0].mode) ? openSize(of: node, mode: path[0].mode) : (rows: 1, leaves: 0)
        let context = path.count > 1 ? path[1].mode : state.base
        let mode: ExpansionMode = expanded ? .expanded : .collapsed
        let end = Int(storage.records[node].subtreeEnd)
        state.clear(subtreeOf: node, end: end)
        if mode != context { state.insertMark(node, end: end, mode: mode) }
        path[0].mode = mode  // the ancestors' modes stay; carrying reads only theirs
        let new = storage.size(of: node, mode: mode)
        carryDifference(rows: new.rows - old.rows, leaves: new.leaves - old.leaves, along: path)
        return ExpansionChange(
            id: menu.id(of: node), isExpanded: expanded, index: index,
            change: index.map { RowChange(at: $0 + 1, inserted: Int(new.rows) - 1, removed: Int(old.rows) - 1) })
    }
}

/// The result of ``FlattenedView/setAll(_:)``: the mode now in force everywhere and the whole
/// table as one splice (`at` 0, `removed` the old count, `inserted` the new count).
public struct ExpansionResetChange: Sendable, Equatable {
    public var mode: ExpansionMode
    public var change: RowChange

    public init(mode: ExpansionMode, change: RowChange) {
        self.mode = mode
        self.change = change
    }
}
