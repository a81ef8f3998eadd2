import MenuModel

/// The rows of a session's table whose availability changed between two overlays: what a changes
/// feed tells a client to fetch again (`reconfigured`) after a change of availability, so that an
/// open table updates those rows only.
public enum AvailabilityRows {
    /// The ids whose shown entry (``AvailabilityOverlay/shownEntries``) differs between `old` and
    /// `new` (one side may have none).
    public static func changedIDs(from old: AvailabilityOverlay, to new: AvailabilityOverlay) -> [String] {
        let (before, after) = (old.shownEntries, new.shownEntries)
        var ids: [String] = []
        for (id, entry) in after where before[id] != entry { ids.append(id) }
        for id in before.keys where after[id] == nil { ids.append(id) }
        return ids.sorted()
    }

    /// The visible rows of `view` (its indices, ascending) whose row shows something else under
    /// `new` than under `old` (both resolved on `view`'s menu), given the ids whose entries differ.
    ///
    /// Only rows an entry can reach are looked at: each changed node, its ancestors (a computed
    /// group's value follows its rows) and, for a group, its visible descendants (they inherit
    /// it). Cost: O(changed · depth · log n) plus the visible rows under changed groups.
    public static func reconfigured(
        from old: ResolvedAvailability, to new: ResolvedAvailability, changedIDs: [String], in view: FlattenedView
    ) -> [Int] {
        let menu = view.menu
        var rows = Set<Int>()
        var looked = Set<Menu.Node>()
        func look(_ node: Menu.Node) {
            guard looked.insert(node).inserted, let index = view.index(ofNode: node) else { return }
            if old.shown(node) != new.shown(node) { rows.insert(index) }
        }
        for id in changedIDs {
            guard let node = menu.node(withID: id) else { continue }
            look(node)
            var ancestor = menu.parent(of: node)
            while let group = ancestor {
                look(group)
                ancestor = menu.parent(of: group)
            }
            guard menu.isGroup(node), view.isExpanded(node), let index = view.index(ofNode: node) else { continue }
            var row = index
            view.forEachVisibleNode(offset: index + 1, limit: view.visibleDescendantCount(ofExpandedGroup: node)) {
                visible in
                row += 1
                if old.shown(visible.node) != new.shown(visible.node) { rows.insert(row) }
            }
        }
        return rows.sorted()
    }
}
