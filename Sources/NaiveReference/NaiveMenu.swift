import MenuModel

/// The seeds' design, kept deliberately naive as a reference: a mutable tree with `isExpand` on
/// every node, recursive `count()` and `itemAt(index)`. Correct by inspection, O(n) per call.
///
/// Shared by the differential tests and `menu-bench`, which measures the model against it.
package final class NaiveMenuItem {
    package let id: String
    package let title: String
    package let isGroup: Bool
    package let depth: Int
    package var isExpand: Bool
    /// What the config says (`isExpand` before any change).
    package let isExpandedByDefault: Bool
    package var children: [NaiveMenuItem] = []
    package let attributes: [String: JSONValue]?
    /// The item's place in the config's document order, from 1 (0: the root).
    package internal(set) var ordinal = 0
    /// The enclosing group; the root for a top-level item, nil for the root.
    package internal(set) weak var parent: NaiveMenuItem?

    package init(id: String, title: String, isGroup: Bool, depth: Int, isExpand: Bool, attributes: [String: JSONValue]?)
    {
        self.id = id
        self.title = title
        self.isGroup = isGroup
        self.depth = depth
        self.isExpand = isExpand
        self.isExpandedByDefault = isExpand
        self.attributes = attributes
    }

    /// Sets this item and every group under it, recursively, the obvious way.
    package func setAll(_ expanded: (NaiveMenuItem) -> Bool) {
        if isGroup { isExpand = expanded(self) }
        for child in children { child.setAll(expanded) }
    }

    /// Rows this item shows: itself plus, when expanded, its children's.
    package func count() -> Int {
        var count = 1
        if isExpand { for child in children { count += child.count() } }
        return count
    }

    /// The rows a collapse would remove now: the visible descendants of an expanded group, 0 for
    /// a collapsed one; nil for a row.
    package func visibleDescendantCount() -> Int? {
        isGroup ? (isExpand ? count() - 1 : 0) : nil
    }

    package func leafCount() -> Int {
        if !isGroup { return 1 }
        return isExpand ? children.reduce(0) { $0 + $1.leafCount() } : 0
    }

    /// The item at `index` of this item's rows (0 is the item itself).
    package func itemAt(_ index: Int) -> NaiveMenuItem? {
        if index == 0 { return self }
        guard isExpand else { return nil }
        var rest = index - 1
        for child in children {
            let size = child.count()
            if rest < size { return child.itemAt(rest) }
            rest -= size
        }
        return nil
    }

    /// The first item with `id` in a preorder walk below this one (a walk, as the seeds look an
    /// item up; ``NaiveMenu/item(withID:)`` reads the id table instead).
    package func find(_ id: String) -> NaiveMenuItem? {
        for child in children {
            if child.id == id { return child }
            if let found = child.find(id) { return found }
        }
        return nil
    }
}

/// The reference view: a root item (never a row) over the top-level items.
///
/// The tree's shape is fixed once built (only `isExpand` changes), so an id's item is kept in a
/// dictionary: ``item(withID:)`` is O(1), which keeps the differential tests' checks of every
/// row's fields linear in the rows (they look each row's item up by id).
package struct NaiveMenu {
    package let root: NaiveMenuItem
    private let itemsByID: [String: NaiveMenuItem]

    package init(spec: [TreeSpec]) {
        let root = NaiveMenuItem(id: "", title: "", isGroup: true, depth: -1, isExpand: true, attributes: nil)
        var itemsByID: [String: NaiveMenuItem] = [:]
        var ordinal = 0
        func build(_ specs: [TreeSpec], into parent: NaiveMenuItem) {
            for spec in specs {
                let item = NaiveMenuItem(
                    id: spec.id, title: spec.title, isGroup: spec.children != nil,
                    depth: parent.depth + 1, isExpand: spec.expanded, attributes: spec.attributes)
                parent.children.append(item)
                item.parent = parent
                if itemsByID[spec.id] == nil { itemsByID[spec.id] = item }  // the first, as a walk finds it
                ordinal += 1
                item.ordinal = ordinal
                if let children = spec.children { build(children, into: item) }
            }
        }
        build(spec, into: root)
        self.root = root
        self.itemsByID = itemsByID
    }

    package var count: Int { root.count() - 1 }
    package var leafCount: Int { root.leafCount() }

    package func rows(offset: Int, limit: Int) -> [(index: Int, item: NaiveMenuItem)] {
        guard offset >= 0, limit > 0 else { return [] }
        let total = count
        return (offset ..< min(offset + limit, total)).map { ($0, root.itemAt($0 + 1)!) }
    }

    /// Every visible row in order: one preorder walk that enters only expanded groups. O(n), the
    /// whole table at once, for comparing every field of every row on large menus (where
    /// ``rows(offset:limit:)``, O(n) per row, would be quadratic).
    package func flattened() -> [(index: Int, item: NaiveMenuItem)] {
        var rows: [(index: Int, item: NaiveMenuItem)] = []
        func walk(_ item: NaiveMenuItem) {
            for child in item.children {
                rows.append((rows.count, child))
                if child.isExpand { walk(child) }
            }
        }
        walk(root)
        return rows
    }

    /// Every item, visible or not, in document order (preorder).
    package func preorder() -> [NaiveMenuItem] {
        var items: [NaiveMenuItem] = []
        func walk(_ item: NaiveMenuItem) {
            for child in item.children {
                items.append(child)
                walk(child)
            }
        }
        walk(root)
        return items
    }

    /// The item with `id`, group or row; nil when no item has it. O(1).
    package func item(withID id: String) -> NaiveMenuItem? { itemsByID[id] }

    /// The groups that enclose the item with `id`, outermost first, the root included (the
    /// parents' chain, reversed); nil when no item has `id`.
    package func ancestors(of id: String) -> [NaiveMenuItem]? { itemsByID[id].map(Self.ancestors(above:)) }

    private static func ancestors(above item: NaiveMenuItem) -> [NaiveMenuItem] {
        var chain: [NaiveMenuItem] = []
        var item = item
        while let parent = item.parent {
            chain.append(parent)
            item = parent
        }
        return chain.reversed()
    }

    /// The visible row of the item with `id`: one preorder walk that counts rows and enters only
    /// expanded groups, so a hidden or unknown id is never reached (nil).
    package func index(of id: String) -> Int? {
        var row = 0
        func walk(_ item: NaiveMenuItem) -> Int? {
            for child in item.children {
                if child.id == id { return row }
                row += 1
                if child.isExpand, let found = walk(child) { return found }
            }
            return nil
        }
        return walk(root)
    }

    /// The ids of the groups enclosing the item with `id`, from the top; nil when no item has it.
    package func path(of id: String) -> [String]? {
        ancestors(of: id).map { $0.dropFirst().map(\.id) }
    }

    /// Expands every collapsed group enclosing the item with `id`, top down, and answers what a
    /// table view needs: the rows added after the topmost group it expanded (nil when none was
    /// collapsed), and the item's row. Nil when no item has the id.
    package mutating func reveal(_ id: String) -> ExpansionChange? {
        guard let item = itemsByID[id] else { return nil }
        let collapsed = Self.ancestors(above: item).dropFirst().filter { !$0.isExpand }
        var change: RowChange?
        if let top = collapsed.first, let at = index(of: top.id) {
            let before = count
            for group in collapsed { group.isExpand = true }
            change = RowChange(at: at + 1, inserted: count - before, removed: 0)
        }
        return ExpansionChange(
            id: id, isExpanded: item.isGroup && item.isExpand, index: index(of: id), change: change)
    }

    /// Sets a group's state the seed's way (flip `isExpand`), returning what a table view needs.
    package mutating func setExpanded(_ id: String, _ expanded: Bool) -> ExpansionChange? {
        guard let group = root.find(id), group.isGroup else { return nil }
        let index = index(of: id)
        let before = count
        group.isExpand = expanded
        let after = count
        return ExpansionChange(
            id: id, isExpanded: expanded, index: index,
            change: index.map {
                RowChange(at: $0 + 1, inserted: max(after - before, 0), removed: max(before - after, 0))
            })
    }

    /// Sets every group to `mode` (`.default`: what the config says) by visiting every item, and
    /// reports the whole table replaced.
    package mutating func setAll(_ mode: ExpansionMode) -> ExpansionResetChange {
        let before = count
        for child in root.children {
            child.setAll { mode == .default ? $0.isExpandedByDefault : mode == .expanded }
        }
        return ExpansionResetChange(mode: mode, change: RowChange(at: 0, inserted: count, removed: before))
    }

    /// Sets a group and every group under it by visiting them all; the change replaces the rows
    /// shown under the group before by those shown after (nil when the group is hidden).
    package mutating func setExpandedRecursively(_ id: String, _ expanded: Bool) -> ExpansionChange? {
        guard let group = root.find(id), group.isGroup else { return nil }
        let index = index(of: id)
        let before = group.count() - 1
        group.setAll { _ in expanded }
        let after = group.count() - 1
        return ExpansionChange(
            id: id, isExpanded: expanded, index: index,
            change: index.map { RowChange(at: $0 + 1, inserted: after, removed: before) })
    }
}
