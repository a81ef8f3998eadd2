/// Locating a node in the view and making it visible: what a table view needs to scroll to a node
/// (breadcrumbs, search results, a link) without walking the table.
///
/// Costs, with depth d and m overlay entries on a level: ``visibleDescendantCount(ofNode:)``
/// O(log m) (O(1) for a session that changed nothing below the group's level), ``ancestors(of:)``
/// O(d), ``reveal(_:)`` O(d · (log m + s)) for s changed siblings whose running sums shift, as one
/// ``setExpanded(_:_:)``: each group it opens climbs only to the next collapsed one.
extension FlattenedView {
    /// The rows a collapse of `node` would remove now: its visible descendants when it is an
    /// expanded group, 0 when it is a collapsed group or a row.
    public func visibleDescendantCount(ofNode node: Menu.Node) -> Int {
        isExpanded(node) ? visibleDescendantCount(ofExpandedGroup: node) : 0
    }

    /// ``visibleDescendantCount(ofNode:)`` of a group the caller knows is expanded here (the page
    /// walk does), without looking its state up again.
    public func visibleDescendantCount(ofExpandedGroup group: Menu.Node) -> Int {
        Int(openSize(of: group).rows) - 1
    }

    /// The groups enclosing `node`, from the top-level one down to its parent (empty at the top).
    public func ancestors(of node: Menu.Node) -> [Menu.Node] { menu.ancestors(of: node) }

    /// The enclosing groups of `node` that are collapsed here, from the top down: what
    /// ``reveal(_:)`` expands.
    public func collapsedAncestors(of node: Menu.Node) -> [Menu.Node] {
        ancestors(of: node).filter { !isExpanded($0) }
    }

    /// Expands every collapsed group enclosing the node with `id`, so that it is visible, and
    /// answers its row and the rows that appeared: one contiguous splice right after the topmost
    /// group it expanded (which was visible, as every group above it is expanded), or nil when the
    /// node was visible already and nothing changed. `isExpanded` is the node's own state (false
    /// for a row); the node itself never changes.
    public mutating func reveal(_ id: String) throws(ExpansionError) -> ExpansionChange {
        guard let node = menu.node(withID: id) else { throw .unknownNode(id: id) }
        let collapsed = collapsedAncestors(of: node)
        guard let top = collapsed.first else {
            return ExpansionChange(id: id, isExpanded: isExpanded(node), index: index(ofNode: node), change: nil)
        }
        let at = (index(ofNode: top) ?? -1) + 1  // visible: every group above it is expanded
        // From the bottom up: each group but the top one is hidden while it opens, so its
        // difference climbs only to the next collapsed group above it (the climbs never overlap:
        // O(d · (log m + s)) in all), and the top one's is what the table gains.
        var inserted: Int32 = 0
        for group in collapsed.reversed() { inserted = flip(group) }
        return ExpansionChange(
            id: id, isExpanded: isExpanded(node), index: index(ofNode: node),
            change: RowChange(at: at, inserted: Int(inserted), removed: 0))
    }
}
