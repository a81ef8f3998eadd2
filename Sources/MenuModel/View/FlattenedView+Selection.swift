/// Choosing leaves in a session's view: one leaf, every leaf under a group at any depth, or every
/// leaf of the menu, whatever is expanded (``SelectionState``), with the rows whose content the
/// write changed, for the client and the changes feed.
///
/// Cost: a write as ``SelectionState/set(_:selected:in:excluding:)`` plus O(d · (log m + log k))
/// to place the node's row; checking the groups' maximums O(r · log k) for r ruled groups.
extension FlattenedView {
    /// Selects (`true`) or clears the leaf with `id`, or every leaf under the group with `id`,
    /// leaving each of `excluded` (leaves that cannot be chosen now) cleared.
    public mutating func setSelected(
        _ id: String, _ selected: Bool, excluding excluded: [Menu.Node] = []
    ) throws(ExpansionError) -> SelectionChange {
        guard let node = menu.node(withID: id) else { throw .unknownNode(id: id) }
        let changed = state.selection.set(node, selected: selected, in: menu, excluding: excluded)
        return SelectionChange(
            id: id, node: node, selected: selected, changed: changed, rows: rowsShowing(node),
            selectedCount: state.selection.selectedCount(in: node, of: menu))
    }

    /// Selects or clears every leaf of the menu, leaving each of `excluded` cleared. O(e log e)
    /// for e excluded leaves (O(1) without).
    public mutating func setAllSelected(_ selected: Bool, excluding excluded: [Menu.Node] = []) -> SelectionChange {
        let changed = state.selection.setAll(selected, excluding: excluded, in: menu)
        return SelectionChange(
            id: nil, node: 0, selected: selected, changed: changed, rows: RowRange(at: 0, count: count),
            selectedCount: state.selection.selectedCount(of: menu))
    }

    /// Puts `selection` back (a refused write's undo). O(1).
    public mutating func setSelection(_ selection: SelectionState) { state.selection = selection }

    /// The rows showing `node` and its subtree now: its row and its visible descendants, or none
    /// (count 0, at its nearest visible ancestor's row) when an enclosing group is collapsed.
    func rowsShowing(_ node: Menu.Node) -> RowRange {
        if let row = index(ofNode: node) { return RowRange(at: row, count: 1 + visibleDescendantCount(ofNode: node)) }
        let shown = menu.ancestors(of: node).last { index(ofNode: $0) != nil }
        return RowRange(at: shown.flatMap(index(ofNode:)) ?? 0, count: 0)
    }
}

extension SelectionState {
    /// The first group, in menu order, whose `maxSelect` this state breaks and `before` did not
    /// break as badly (it selects more there), among the groups enclosing `node` and those under
    /// it (`node` 0: every group): what a write on `node` must not cause. A write that only
    /// lowers a count, or leaves it, is never refused, even where a maximum was already broken
    /// (by a reload that changed the rule). O(r · log k) for r ruled groups.
    public func exceededMaximum(comparedWith before: SelectionState, around node: Menu.Node, in menu: Menu)
        -> (group: Menu.Node, max: Int, selected: Int)?
    {
        let end = node == 0 ? menu.nodeCount + 1 : menu.subtreeEnd(node)
        for group in menu.ruledGroups {
            guard let max = menu.selectionRule(of: group)?.max else { continue }
            let encloses = group <= node && node < menu.subtreeEnd(group)
            guard encloses || (group >= node && group < end) else { continue }
            let selected = selectedCount(in: group, of: menu)
            if selected > max && selected > before.selectedCount(in: group, of: menu) {
                return (group, max, selected)
            }
        }
        return nil
    }
}

/// What a selection write did: the node written (`id` nil and `node` 0 for the whole menu), the
/// state asked for, whether any leaf changed, the rows showing the node's subtree now (their
/// content changed; the rows of the node's ancestors too, wherever they are: their counts), and
/// the leaves of its subtree selected after the write.
public struct SelectionChange: Sendable, Equatable {
    public var id: String?
    public var node: Menu.Node
    public var selected: Bool
    public var changed: Bool
    public var rows: RowRange
    public var selectedCount: Int

    public init(id: String?, node: Menu.Node, selected: Bool, changed: Bool, rows: RowRange, selectedCount: Int) {
        self.id = id
        self.node = node
        self.selected = selected
        self.changed = changed
        self.rows = rows
        self.selectedCount = selectedCount
    }
}

/// `count` consecutive rows of a table from row `at`.
public struct RowRange: Sendable, Hashable {
    public var at: Int
    public var count: Int

    public init(at: Int, count: Int) {
        self.at = at
        self.count = count
    }
}
