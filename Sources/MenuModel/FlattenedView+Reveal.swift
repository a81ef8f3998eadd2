/// Locating a node in the view and making it visible: what a table view needs to scroll to a node
/// (breadcrumbs, search results, a link) without walking the table.
///
/// Costs, with depth d and m overlay entries on a level: ``visibleDescendantCount(ofNode:)``
/// O(log m) (O(1) for a session that changed nothing below the group's level), ``ancestors(of:)``
/// O(d).
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
    public func ancestors(of node: Menu.Node) -> [Menu.Node] {
        var path: [Menu.Node] = []
        path.reserveCapacity(menu.depth(of: node))
        var current = node
        while let parent = menu.parent(of: current) {
            path.append(parent)
            current = parent
        }
        return path.reversed()
    }
}
