/// The flat table a client shows: the rows of a ``Menu`` visible under one session's
/// ``SessionState``, in preorder. A row is visible when every enclosing group is expanded.
///
/// Chosen structure: preorder numbering of the immutable menu with, per node, its visible size
/// under each ``ExpansionMode`` (O(1) from the frozen arrays) and its left siblings' default
/// visible size; the session adds a base mode, marks and a sparse overlay of visible-size
/// differences along the ancestor paths of the groups it marked or flipped (see
/// ``SessionState``). With n nodes, depth d, fan-out f, k marks and m overlay entries on a level:
/// - ``count``, ``leafCount``: O(1).
/// - ``rows(offset:limit:)``: O(d · log f · (log m + log k)) to find the first row by descending
///   through the groups, then O(limit) (amortised: the flips and marks are merged in), independent
///   of `offset` and of n.
/// - ``index(of:)``: O(d · (log m + log k)), plus O(d · log f) under a `.collapsed` mode (a node's
///   ordinal among its siblings). ``toggle(_:)`` and ``setExpanded(_:_:recursive:)``:
///   O(d · (log m + log k + s)), where s is the number of changed siblings whose running sums shift
///   (a contiguous add); a recursive change adds the flips, marks and entries it removes.
/// - ``setAll(_:)``: O(1) plus freeing the old state.
/// The menu is never mutated; changing one view's state never affects another view.
public struct FlattenedView: Sendable {
    public let menu: Menu
    public internal(set) var state: SessionState

    public init(menu: Menu, state: SessionState = SessionState()) {
        self.menu = menu
        self.state = state
    }

    var storage: Menu.Storage { menu.storage }

    // MARK: Counts

    /// Visible rows, groups and rows alike.
    public var count: Int {
        Int(storage.childrenSize(of: 0, mode: state.base).rows)
            + Int(withOverlay(level: 0) { $0.total(0 ..< $0.count).rows })
    }

    /// Visible rows that are not groups.
    public var leafCount: Int {
        Int(storage.childrenSize(of: 0, mode: state.base).leaves)
            + Int(withOverlay(level: 0) { $0.total(0 ..< $0.count).leaves })
    }

    /// Whether `node` is an expanded group in this view (false for rows). O(log flips) without
    /// marks, O(d · log k) with them.
    @inline(__always) public func isExpanded(_ node: Menu.Node) -> Bool {
        isExpanded(node, mode: mode(at: node))
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
                visibleDescendantCount: isGroup ? visibleDescendantCount(ofNode: node) : nil,
                positionInSet: menu.siblingPosition(of: node),
                setSize: menu.siblingCount(of: node),
                selected: isGroup ? nil : state.selection.isSelected(node, in: menu),
                selectedCount: isGroup ? state.selection.selectedCount(in: node, of: menu) : nil,
                leafCount: isGroup ? menu.leafCount(of: node) : nil)
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
    /// Finding the first row costs O(d · log f · (log m + log k)); each further row O(1) amortised
    /// (the flips and marks are merged in, as nodes only increase; the marks enclosing the current
    /// node are kept on a stack of at most d entries, on the stack frame, not the heap).
    @inlinable
    public func forEachVisibleNode(offset: Int, limit: Int, _ body: (VisibleNode) -> Void) {
        let count = self.count
        guard offset >= 0, limit > 0, offset < count else { return }
        let first = node(atRow: offset)
        let last = offset + min(limit, count - offset) - 1
        // The base mode as bit tests: expanded when `expandsAll` or a flag under `expandMask` is set.
        let expandsAll = state.base == .expanded
        let expandMask = state.base == .default ? Menu.Storage.expandedFlag : 0
        menu.storage.records.withUnsafeBufferPointer { records in
            state.flipped.withUnsafeBufferPointer { flipped in
                state.marks.withUnsafeBufferPointer { marks in
                    withUnsafeTemporaryAllocation(
                        of: (end: Int32, mode: ExpansionMode).self, capacity: marks.isEmpty ? 1 : menu.height + 1
                    ) { enclosing in
                        let end = Int(records[0].subtreeEnd)  // one past the last node
                        var node = first
                        var index = offset
                        var position = flipped.lowerBound(of: Int32(first)).index
                        var markPosition = marks.lowerBound(mark: Int32(first)).index
                        var depth = marks.isEmpty ? 0 : enclosingMarks(of: first, into: enclosing)
                        while true {
                            let record = records[node]
                            var expanded = false
                            if record.flags & Menu.Storage.groupFlag != 0 {
                                var byMode = expandsAll || record.flags & expandMask != 0
                                if !marks.isEmpty {
                                    while depth > 0, enclosing[depth &- 1].end <= Int32(node) { depth &-= 1 }
                                    while markPosition < marks.count, marks[markPosition].node < Int32(node) {
                                        markPosition &+= 1
                                    }
                                    if markPosition < marks.count, marks[markPosition].node == Int32(node) {
                                        enclosing[depth] = (marks[markPosition].end, marks[markPosition].mode)
                                        depth &+= 1
                                    }
                                    if depth > 0 { byMode = enclosing[depth &- 1].mode.expands(flags: record.flags) }
                                }
                                while position < flipped.count, flipped[position] < Int32(node) { position &+= 1 }
                                let isFlipped = position < flipped.count && flipped[position] == Int32(node)
                                expanded = byMode != isFlipped
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
        }
    }

    /// The node shown at visible row `row` (0 ..< count): with no overlay and no marks (every
    /// visible size is the base mode's) one lookup (the menu's default row table; row + 1 when all
    /// is expanded; the top-level child list when all is collapsed); otherwise by descending from
    /// the root and, in each group, binary-searching the child whose rows contain it.
    @usableFromInline func node(atRow row: Int) -> Menu.Node {
        if state.levels.isEmpty && state.marks.isEmpty {
            switch state.base {
            case .default: return Int(storage.defaultRowNodes[row])  // the default view: a table
            case .expanded: return row + 1
            case .collapsed: return Int(storage.children[Int(storage.records[0].firstChildSlot) + row].node)
            }
        }
        var group = 0
        var mode = state.base
        var target = Int32(row)
        var level = 0
        while true {
            let first = Int(storage.records[group].firstChildSlot)
            let childCount = Int(storage.records[group].childCount)
            let (child, consumed) = withOverlay(level: level) { overlay -> (Int32, Int32) in
                // Overlay entries at this level inside the group are exactly its changed children.
                let lowEntry = overlay.isEmpty ? 0 : overlay.lowerBound(node: Int32(group + 1)).index
                let highEntry =
                    overlay.isEmpty
                    ? 0 : overlay.lowerBound(node: storage.records[group].subtreeEnd, from: lowEntry).index
                // Largest child ordinal whose session prefix is <= target.
                var low = 0
                var high = childCount - 1
                while low < high {
                    let mid = (low + high + 1) / 2
                    if prefix(
                        of: storage.children[first + mid], ordinal: mid, in: group, mode: mode, overlay: overlay,
                        entries: lowEntry ..< highEntry) <= target
                    {
                        low = mid
                    } else {
                        high = mid - 1
                    }
                }
                let entry = storage.children[first + low]
                return (
                    entry.node,
                    prefix(
                        of: entry, ordinal: low, in: group, mode: mode, overlay: overlay,
                        entries: lowEntry ..< highEntry)
                )
            }
            target -= consumed
            if target == 0 { return Int(child) }
            target -= 1
            group = Int(child)
            mode = state.mark(at: group) ?? mode
            level += 1
        }
    }

    /// Calls `body` with the overlay entries of `level` (none past the deepest level), lent from
    /// the state without copying the level's array (a copy is a reference count change on memory
    /// other threads reading the same session share).
    @inline(__always)
    private func withOverlay<Result>(level: Int, _ body: (UnsafeBufferPointer<OverlayEntry>) -> Result) -> Result {
        state.levels.withUnsafeBufferPointer { levels in
            level < levels.count
                ? levels[level].withUnsafeBufferPointer(body) : body(UnsafeBufferPointer(start: nil, count: 0))
        }
    }

    /// Visible rows of `child`'s left siblings in this view (`child` is `group`'s `ordinal`-th,
    /// `mode` is in force at `group`).
    @inline(__always)
    private func prefix(
        of child: Menu.ChildEntry, ordinal: Int, in group: Int, mode: ExpansionMode,
        overlay: UnsafeBufferPointer<OverlayEntry>, entries: Range<Int>
    ) -> Int32 {
        let base = storage.siblingPrefix(of: child, ordinal: ordinal, in: group, mode: mode)
        guard !entries.isEmpty else { return base }
        let before = overlay.lowerBound(node: child.node, from: entries.lowerBound, to: entries.upperBound).index
        return base + overlay.total(entries.lowerBound ..< before).rows
    }

    /// The visible row of the node with `id`; nil when an enclosing group is collapsed or no node
    /// has that id.
    public func index(of id: String) -> Int? {
        menu.node(withID: id).flatMap(index(ofNode:))
    }

    /// The visible row of `node`, or nil when an enclosing group is collapsed. O(d · (log m + log k)).
    public func index(ofNode node: Menu.Node) -> Int? {
        guard state.marks.isEmpty else { return withAncestry(of: node) { index(along: $0) } }
        // No marks: the base is in force everywhere, so one walk up without a path.
        var row: Int32 = 0
        var current = node
        while current != 0 {
            let parent = Int(storage.records[current].parent)
            if parent != 0 {
                guard isExpanded(parent, mode: state.base) else { return nil }
                row += 1
            }
            row += rowsBefore(current, in: parent, mode: state.base)
            current = parent
        }
        return Int(row)
    }

    /// Visible rows of `child`'s left siblings in `parent` (in force there: `mode`).
    @inline(__always) private func rowsBefore(_ child: Menu.Node, in parent: Menu.Node, mode: ExpansionMode) -> Int32 {
        let changed = withOverlay(level: Int(storage.records[child].depth)) { overlay in
            let low = overlay.lowerBound(node: Int32(parent + 1)).index
            let high = overlay.lowerBound(node: Int32(child), from: low).index
            return overlay.total(low ..< high).rows
        }
        let siblings: Int32 =
            switch mode {
            case .default: storage.records[child].siblingPrefix
            case .expanded: Int32(child - parent - 1)
            case .collapsed: Int32(storage.ordinal(of: child, in: parent))
            }
        return changed + siblings
    }

    /// The visible row of `path[0]`, given its ``fillAncestry(of:into:)``.
    func index(along path: UnsafeMutableBufferPointer<PathStep>) -> Int? {
        var index: Int32 = 0
        for (step, (current, _)) in path.enumerated() {
            let parent = step + 1 < path.count ? path[step + 1].node : 0
            let parentMode = step + 1 < path.count ? path[step + 1].mode : state.base
            if parent != 0 {
                guard isExpanded(parent, mode: parentMode) else { return nil }
                index += 1
            }
            index += rowsBefore(current, in: parent, mode: parentMode)
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
    ///
    /// With `recursive`, sets the group and every group under it: one mark on the group (none when
    /// that mode is already in force at its parent), after forgetting the marks and flips inside
    /// its subtree. Then `index` is the group's row (nil when an enclosing group is collapsed) and,
    /// when it is visible, `change` replaces its visible descendants: `at` index + 1, `removed` the
    /// rows shown under it before (0 if it was collapsed), `inserted` the rows shown under it now
    /// (its whole subtree when expanding, 0 when collapsing). When it is hidden, `change` is nil:
    /// no visible row changes (its new state shows when it appears). Cost: as a toggle, plus the
    /// flips, marks and overlay entries it removes (each added by an earlier change); the state
    /// afterwards holds one mark and at most d entries more than outside the subtree.
    public mutating func setExpanded(_ id: String, _ expanded: Bool, recursive: Bool = false) throws(ExpansionError)
        -> ExpansionChange
    {
        let node = try group(withID: id)
        return recursive ? setExpanded(node: node, expanded, recursive: true) : setExpanded(node: node, expanded)
    }

    func group(withID id: String) throws(ExpansionError) -> Menu.Node {
        try menu.group(withID: id)
    }

    /// Sets `node`'s expansion (``flip(_:)`` when it changes) and answers the change at its row.
    mutating func setExpanded(node: Menu.Node, _ expanded: Bool) -> ExpansionChange {
        withUnsafeTemporaryAllocation(of: PathStep.self, capacity: max(menu.height, 1)) { buffer in
            setExpanded(node: node, expanded, path: fillAncestry(of: node, into: buffer))
        }
    }

    private mutating func setExpanded(node: Menu.Node, _ expanded: Bool, path: UnsafeMutableBufferPointer<PathStep>)
        -> ExpansionChange
    {
        let index = index(along: path)
        let current = isExpanded(node, mode: path[0].mode)
        guard current != expanded else {
            return ExpansionChange(
                id: menu.id(of: node), isExpanded: current, index: index,
                change: index.map { RowChange(at: $0 + 1, inserted: 0, removed: 0) })
        }
        let open = openSize(of: node, mode: path[0].mode)
        let rows = expanded ? open.rows - 1 : 1 - open.rows
        let leaves = expanded ? open.leaves : -open.leaves
        state.flip(node)
        carryDifference(rows: rows, leaves: leaves, along: path)
        return ExpansionChange(
            id: menu.id(of: node), isExpanded: expanded, index: index,
            change: index.map { RowChange(at: $0 + 1, inserted: max(Int(rows), 0), removed: max(Int(-rows), 0)) })
    }

    /// Flips `node`'s expansion and carries the size difference up the overlay while the
    /// ancestors are open, stopping at the first closed one (whose own size does not change);
    /// returns the rows the group now shows more (negative: fewer). O(d · (log m + log k + s));
    /// no row index is computed (``reveal(_:)`` flips several groups).
    mutating func flip(_ node: Menu.Node) -> Int32 {
        withUnsafeTemporaryAllocation(of: PathStep.self, capacity: max(menu.height, 1)) { buffer in
            let path = fillAncestry(of: node, into: buffer)
            let expanded = !isExpanded(node, mode: path[0].mode)
            let open = openSize(of: node, mode: path[0].mode)
            let rows = expanded ? open.rows - 1 : 1 - open.rows
            let leaves = expanded ? open.leaves : -open.leaves
            state.flip(node)
            carryDifference(rows: rows, leaves: leaves, along: path)
            return rows
        }
    }

    /// Rows (itself included) and leaf rows `group` shows when expanded in this view, the mode in
    /// force at it looked up (O(1) without marks, O(d · log k) with them).
    func openSize(of group: Menu.Node) -> (rows: Int32, leaves: Int32) {
        openSize(of: group, mode: mode(at: group))
    }

    /// Adds a size difference to `path[0]`'s entry and carries it up the overlay while the
    /// ancestors are open (a closed ancestor's own size does not change).
    mutating func carryDifference(rows: Int32, leaves: Int32, along path: UnsafeMutableBufferPointer<PathStep>) {
        guard rows != 0 || leaves != 0 else { return }
        for (step, (ancestor, _)) in path.enumerated() {
            let parent = Int(storage.records[ancestor].parent)
            state.addDifference(
                node: ancestor, depth: Int(storage.records[ancestor].depth), rows: rows, leaves: leaves,
                parent: parent, parentEnd: Int(storage.records[parent].subtreeEnd))
            if parent == 0 || !isExpanded(parent, mode: path[step + 1].mode) { break }
        }
    }

    /// Rows (itself included) and leaf rows `group` shows when expanded in this view, `mode`
    /// being in force at it.
    func openSize(of group: Menu.Node, mode: ExpansionMode) -> (rows: Int32, leaves: Int32) {
        let changed = withOverlay(level: Int(storage.records[group].depth) + 1) { overlay in
            let low = overlay.lowerBound(node: Int32(group + 1)).index
            let high = overlay.lowerBound(node: storage.records[group].subtreeEnd, from: low).index
            return overlay.total(low ..< high)
        }
        let children = storage.childrenSize(of: group, mode: mode)
        return (1 + children.rows + changed.rows, children.leaves + changed.leaves)
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

/// One row of the flat table. `isExpanded`, `childCount`, `visibleDescendantCount`,
/// `selectedCount` and `leafCount` are non-nil exactly for groups (when read from a view), and
/// `selected` exactly for leaves; `parentID` is nil exactly for a top-level node.
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
    /// Its place among its parent's children, from 1, and their number (`aria-posinset`,
    /// `aria-setsize`; the level is ``depth`` + 1).
    public var positionInSet: Int
    public var setSize: Int
    /// A leaf's place in the session's selection (nil for a group).
    public var selected: Bool?
    /// A group's selected leaves and all its leaves (nil for a leaf).
    public var selectedCount: Int?
    public var leafCount: Int?

    public init(
        index: Int, node: Menu.Node, id: String, title: String, depth: Int, isGroup: Bool,
        isExpanded: Bool?, childCount: Int?, attributes: [String: JSONValue]?,
        parentID: String? = nil, visibleDescendantCount: Int? = nil, positionInSet: Int = 1, setSize: Int = 1,
        selected: Bool? = nil, selectedCount: Int? = nil, leafCount: Int? = nil
    ) {
        self.selected = selected
        self.selectedCount = selectedCount
        self.leafCount = leafCount
        self.positionInSet = positionInSet
        self.setSize = setSize
        self.index = index
        self.node = node
        self.id = id
        self.title = title
        self.depth = depth
        self.isGroup = isGroup
        self.isExpanded = isExpanded
        self.childCount = childCount
        self.attributes = attributes
        self.parentID = parentID
        self.visibleDescendantCount = visibleDescendantCount
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
        self.id = id
        self.isExpanded = isExpanded
        self.index = index
        self.change = change
    }
}

/// One contiguous splice of the table: the `removed` rows at `at ..< at + removed` are replaced by
/// `inserted` rows, and no row outside changes. For a toggle `at` is the group's index + 1 and one
/// of the counts is 0; a recursive change replaces the group's visible descendants (both counts may
/// be non-zero, and equal counts do not promise equal rows); ``FlattenedView/setAll(_:)`` replaces
/// the whole table (`at` 0).
public struct RowChange: Sendable, Equatable {
    public var at: Int
    public var inserted: Int
    public var removed: Int

    public init(at: Int, inserted: Int, removed: Int) {
        self.at = at
        self.inserted = inserted
        self.removed = removed
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

extension Menu {
    /// The node of the group with `id`: `.unknownGroup` when no node has it, `.notAGroup` when a
    /// row does (what every command on a group answers first). O(1).
    public func group(withID id: String) throws(ExpansionError) -> Node {
        guard let node = node(withID: id) else { throw .unknownGroup(id: id) }
        guard isGroup(node) else { throw .notAGroup(id: id) }
        return node
    }
}
