/// The flat table a client shows: the rows of a ``Menu`` visible under one session's
/// ``ExpansionState``, in preorder. A row is visible when every enclosing group is expanded.
///
/// Chosen structure: preorder numbering of the immutable menu with, per node, its default visible
/// size and its left siblings' default visible size; the session adds a sparse overlay of
/// visible-size differences along the ancestor paths of the groups it changed (see
/// ``ExpansionState``). With n nodes, depth d, fan-out f and m overlay entries on a level:
/// - ``count``, ``leafCount``: O(1).
/// - ``rows(offset:limit:)``: O(d · log f · log m) to find the first row by descending through the
///   groups, then O(limit) (amortised: the changed groups are merged in), independent of
///   `offset` and of n.
/// - ``index(of:)``: O(d · log m). ``toggle(_:)`` and ``setExpanded(_:_:)``: O(d · (log m + s)),
///   where s is the number of changed siblings whose running sums shift (a contiguous add).
/// The menu is never mutated; changing one view's state never affects another view.
public struct FlattenedView: Sendable {
    public let menu: Menu
    public private(set) var state: ExpansionState

    public init(menu: Menu, state: ExpansionState = ExpansionState()) {
        self.menu = menu
        self.state = state
    }

    private var storage: Menu.Storage { menu.storage }

    // MARK: Counts

    /// Visible rows, groups and rows alike.
    public var count: Int {
        Int(storage.openRows[0]) - 1 + Int(withOverlay(level: 0) { $0.total(0 ..< $0.count).rows })
    }

    /// Visible rows that are not groups.
    public var leafCount: Int {
        Int(storage.openLeaves[0]) + Int(withOverlay(level: 0) { $0.total(0 ..< $0.count).leaves })
    }

    /// Whether `node` is an expanded group in this view (false for rows).
    @inline(__always) public func isExpanded(_ node: Menu.Node) -> Bool {
        let flags = storage.records[node].flags
        guard flags & Menu.Storage.groupFlag != 0 else { return false }
        return (flags & Menu.Storage.expandedFlag != 0) != state.isFlipped(node)
    }

    // MARK: Reading rows

    /// Visible rows `offset ..< offset + limit` (fewer at the end; none when `offset >= count`).
    public func rows(offset: Int, limit: Int) -> [FlattenedRow] {
        visibleNodes(offset: offset, limit: limit).map { visible in
            let node = visible.node
            let isGroup = menu.isGroup(node)
            return FlattenedRow(
                index: visible.index, node: node, id: menu.id(of: node), title: menu.title(of: node),
                depth: menu.depth(of: node), isGroup: isGroup,
                isExpanded: isGroup ? visible.isExpanded : nil,
                childCount: isGroup ? menu.childCount(of: node) : nil,
                attributes: menu.attributes(of: node),
                parentID: menu.parent(of: node).map(menu.id(of:)),
                visibleDescendantCount: isGroup ? visibleDescendantCount(ofNode: node) : nil)
        }
    }

    /// The cheap form of ``rows(offset:limit:)``: positions only, for encoders that keep their own
    /// per-node data.
    public func visibleNodes(offset: Int, limit: Int) -> [VisibleNode] {
        var result: [VisibleNode] = []
        result.reserveCapacity(max(0, min(limit, count - offset)))
        forEachVisibleNode(offset: offset, limit: limit) { result.append($0) }
        return result
    }

    /// Calls `body` for visible rows `offset ..< offset + limit` in order, allocating nothing: the
    /// server's page loop. Inlinable, with the menu's records and the state's flipped groups lent
    /// for the whole walk, so a caller in another module compiles it into one loop around `body`.
    /// Finding the first row costs O(d · log f · log m); each further row O(1) amortised (the
    /// flipped groups are merged in, as nodes only increase).
    @inlinable
    public func forEachVisibleNode(offset: Int, limit: Int, _ body: (VisibleNode) -> Void) {
        let count = self.count
        guard offset >= 0, limit > 0, offset < count else { return }
        let first = node(atRow: offset)
        let last = offset + min(limit, count - offset) - 1
        menu.storage.records.withUnsafeBufferPointer { records in
            state.flipped.withUnsafeBufferPointer { flipped in
                let end = Int(records[0].subtreeEnd)  // one past the last node
                var node = first
                var index = offset
                var position = flipped.lowerBound(of: Int32(first)).index
                while true {
                    let record = records[node]
                    var expanded = false
                    if record.flags & Menu.Storage.groupFlag != 0 {
                        while position < flipped.count, flipped[position] < Int32(node) { position &+= 1 }
                        let isFlipped = position < flipped.count && flipped[position] == Int32(node)
                        expanded = (record.flags & Menu.Storage.expandedFlag != 0) != isFlipped
                    }
                    body(VisibleNode(index: index, node: node, isExpanded: expanded))
                    if index == last { return }
                    index &+= 1
                    // Next in preorder: the first child of an open group, else the node after this
                    // subtree (a sibling of this node or of an ancestor, all of them open).
                    node = expanded && record.childCount > 0 ? node &+ 1 : Int(record.subtreeEnd)
                    guard node < end else { return }  // never past the menu, even if `count` were wrong
                }
            }
        }
    }

    /// The node shown at visible row `row` (0 ..< count): with no overlay (every visible size is the
    /// default) one lookup in the menu's default row table; otherwise by descending from the root
    /// and, in each group, binary-searching the child whose rows contain it.
    @usableFromInline func node(atRow row: Int) -> Menu.Node {
        if state.levels.isEmpty { return Int(storage.defaultRowNodes[row]) }  // the default view: a table
        var group = 0
        var target = Int32(row)
        var level = 0
        while true {
            let first = Int(storage.records[group].firstChildSlot)
            let childCount = Int(storage.records[group].childCount)
            let (child, consumed) = withOverlay(level: level) { overlay -> (Int32, Int32) in
                // Overlay entries at this level inside the group are exactly its changed children.
                let lowEntry = overlay.isEmpty ? 0 : overlay.lowerBound(node: Int32(group + 1)).index
                let highEntry = overlay.isEmpty ? 0 : overlay.lowerBound(node: storage.records[group].subtreeEnd, from: lowEntry).index
                // Largest child ordinal whose session prefix is <= target.
                var low = 0
                var high = childCount - 1
                while low < high {
                    let mid = (low + high + 1) / 2
                    if prefix(of: storage.children[first + mid], overlay: overlay, entries: lowEntry ..< highEntry) <= target {
                        low = mid
                    } else {
                        high = mid - 1
                    }
                }
                let entry = storage.children[first + low]
                return (entry.node, prefix(of: entry, overlay: overlay, entries: lowEntry ..< highEntry))
            }
            target -= consumed
            if target == 0 { return Int(child) }
            target -= 1
            group = Int(child)
            level += 1
        }
    }

    /// Calls `body` with the overlay entries of `level` (none past the deepest level), lent from
    /// the state without copying the level's array (a copy is a reference count change on memory
    /// other threads reading the same session share).
    @inline(__always)
    private func withOverlay<Result>(level: Int, _ body: (UnsafeBufferPointer<OverlayEntry>) -> Result) -> Result {
        state.levels.withUnsafeBufferPointer { levels in
            level < levels.count ? levels[level].withUnsafeBufferPointer(body) : body(UnsafeBufferPointer(start: nil, count: 0))
        }
    }

    /// Visible rows of `child`'s left siblings in this view.
    @inline(__always)
    private func prefix(of child: Menu.ChildEntry, overlay: UnsafeBufferPointer<OverlayEntry>, entries: Range<Int>) -> Int32 {
        let base = child.siblingPrefix
        guard !entries.isEmpty else { return base }
        let before = overlay.lowerBound(node: child.node, from: entries.lowerBound, to: entries.upperBound).index
        return base + overlay.total(entries.lowerBound ..< before).rows
    }

    /// The visible row of the node with `id`; nil when an enclosing group is collapsed or no node
    /// has that id.
    public func index(of id: String) -> Int? {
        menu.node(withID: id).flatMap(index(ofNode:))
    }

    /// The visible row of `node`, or nil when an enclosing group is collapsed. O(depth · log m).
    public func index(ofNode node: Menu.Node) -> Int? {
        var index: Int32 = 0
        var current = node
        while current != 0 {
            let parent = Int(storage.records[current].parent)
            if parent != 0 {
                guard isExpanded(parent) else { return nil }
                index += 1
            }
            index += withOverlay(level: Int(storage.records[current].depth)) { overlay in
                let low = overlay.lowerBound(node: Int32(parent + 1)).index
                let high = overlay.lowerBound(node: Int32(current), from: low).index
                return overlay.total(low ..< high).rows
            }
            index += storage.records[current].siblingPrefix
            current = parent
        }
        return Int(index)
    }

    // MARK: Changing expansion

    /// Flips a group's expansion. Allowed for hidden groups: the change shows when they appear.
    public mutating func toggle(_ id: String) throws(ExpansionError) -> ExpansionChange {
        let node = try group(withID: id)
        return setExpanded(node: node, !isExpanded(node))
    }

    /// Sets a group's expansion; idempotent (setting the current state changes nothing).
    public mutating func setExpanded(_ id: String, _ expanded: Bool) throws(ExpansionError) -> ExpansionChange {
        setExpanded(node: try group(withID: id), expanded)
    }

    private func group(withID id: String) throws(ExpansionError) -> Menu.Node {
        guard let node = menu.node(withID: id) else { throw .unknownGroup(id: id) }
        guard menu.isGroup(node) else { throw .notAGroup(id: id) }
        return node
    }

    /// Sets `node`'s expansion (``flip(_:)`` when it changes) and answers the change at its row.
    mutating func setExpanded(node: Menu.Node, _ expanded: Bool) -> ExpansionChange {
        let index = index(ofNode: node)
        let current = isExpanded(node)
        guard current != expanded else {
            return ExpansionChange(id: menu.id(of: node), isExpanded: current, index: index,
                                   change: index.map { RowChange(at: $0 + 1, inserted: 0, removed: 0) })
        }
        let rows = flip(node)
        return ExpansionChange(
            id: menu.id(of: node), isExpanded: expanded, index: index,
            change: index.map { RowChange(at: $0 + 1, inserted: max(Int(rows), 0), removed: max(Int(-rows), 0)) })
    }

    /// Flips `node`'s expansion and carries the size difference up the overlay while the
    /// ancestors are open, stopping at the first closed one (whose own size does not change);
    /// returns the rows the group now shows more (negative: fewer). O(a · (log m + s)) for the a
    /// open ancestors it climbs; no row index is computed (``reveal(_:)`` flips several groups).
    mutating func flip(_ node: Menu.Node) -> Int32 {
        let expanded = !isExpanded(node)
        let open = openSize(of: node)
        let rows = expanded ? open.rows - 1 : 1 - open.rows
        let leaves = expanded ? open.leaves : -open.leaves
        state.flip(node)
        var ancestor = node
        while rows != 0 || leaves != 0 {
            let parent = Int(storage.records[ancestor].parent)
            state.addDifference(node: ancestor, depth: Int(storage.records[ancestor].depth), rows: rows, leaves: leaves,
                                parent: parent, parentEnd: Int(storage.records[parent].subtreeEnd))
            if parent == 0 || !isExpanded(parent) { break }
            ancestor = parent
        }
        return rows
    }

    /// Rows (itself included) and leaf rows `group` shows when expanded in this view.
    func openSize(of group: Menu.Node) -> (rows: Int32, leaves: Int32) {
        let changed = withOverlay(level: Int(storage.records[group].depth) + 1) { overlay in
            let low = overlay.lowerBound(node: Int32(group + 1)).index
            let high = overlay.lowerBound(node: storage.records[group].subtreeEnd, from: low).index
            return overlay.total(low ..< high)
        }
        return (storage.openRows[group] + changed.rows, storage.openLeaves[group] + changed.leaves)
    }
}

/// A visible node: its row index, its position in the menu, and whether it is expanded here.
public struct VisibleNode: Sendable, Equatable {
    public var index: Int
    public var node: Menu.Node
    public var isExpanded: Bool

    @inlinable
    public init(index: Int, node: Menu.Node, isExpanded: Bool) {
        self.index = index
        self.node = node
        self.isExpanded = isExpanded
    }
}

/// One row of the flat table. `isExpanded`, `childCount` and `visibleDescendantCount` are non-nil
/// exactly for groups; `parentID` is nil exactly for a top-level node.
public struct FlattenedRow: Sendable, Equatable {
    public var index: Int
    public var node: Menu.Node
    public var id: String
    public var title: String
    public var depth: Int
    public var isGroup: Bool
    public var isExpanded: Bool?
    public var childCount: Int?
    public var attributes: [String: JSONValue]?
    /// The enclosing group's id; nil at the top.
    public var parentID: String?
    /// The rows a collapse of this group would remove now (0 when it is collapsed).
    public var visibleDescendantCount: Int?

    public init(index: Int, node: Menu.Node, id: String, title: String, depth: Int, isGroup: Bool,
                isExpanded: Bool?, childCount: Int?, attributes: [String: JSONValue]?,
                parentID: String? = nil, visibleDescendantCount: Int? = nil) {
        self.index = index; self.node = node; self.id = id; self.title = title; self.depth = depth
        self.isGroup = isGroup; self.isExpanded = isExpanded; self.childCount = childCount; self.attributes = attributes
        self.parentID = parentID; self.visibleDescendantCount = visibleDescendantCount
    }
}

/// The result of toggling or setting a group: its new state, its row (nil when hidden) and what a
/// table view must do (nil when hidden; zero counts when nothing changed).
public struct ExpansionChange: Sendable, Equatable {
    public var id: String
    public var isExpanded: Bool
    public var index: Int?
    public var change: RowChange?

    public init(id: String, isExpanded: Bool, index: Int?, change: RowChange?) {
        self.id = id; self.isExpanded = isExpanded; self.index = index; self.change = change
    }
}

/// Rows inserted or removed at `at` (the group's index + 1); one of the counts is 0.
public struct RowChange: Sendable, Equatable {
    public var at: Int
    public var inserted: Int
    public var removed: Int

    public init(at: Int, inserted: Int, removed: Int) {
        self.at = at; self.inserted = inserted; self.removed = removed
    }
}

/// Why an expansion change was refused.
public enum ExpansionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No node has this id.
    case unknownGroup(id: String)
    /// The id names a row, which cannot expand.
    case notAGroup(id: String)
    /// No node, group or row, has this id (``FlattenedView/reveal(_:)``).
    case unknownNode(id: String)

    public var description: String {
        switch self {
        case .unknownGroup(let id): "no group has id \"\(id)\""
        case .notAGroup(let id): "\"\(id)\" is a row, not a group; only groups expand and collapse"
        case .unknownNode(let id): "no group or row has id \"\(id)\""
        }
    }
}
