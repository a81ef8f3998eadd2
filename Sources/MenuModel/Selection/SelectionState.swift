/// One session's selection over the menu's leaves, kept outside the immutable ``Menu`` like
/// ``SessionState``: a base (every leaf selected, or none) and toggles, each a node (group or
/// leaf) that flips the selection of every leaf of its subtree against what encloses it.
///
/// A leaf is selected when ``allByDefault`` is, flipped once by each toggle on its path (itself
/// and its ancestors). A write on a node drops every toggle of its subtree and adds at most one of
/// its own (plus one a leaf it must leave out), so selecting or clearing everything, or a whole
/// group at any depth, takes O(1) memory whatever is expanded.
///
/// Invariants:
/// - `toggles` ascend by node, at most one a node, each with its subtree end in the menu the state
///   belongs to (containment is known without the menu); `toggleIDs[i]` is the id of
///   `toggles[i]`'s node, so a reload carries the state by id without the menu it left (a
///   reload's translation maps groups only, and a toggle may be a leaf).
/// - `edges` ascend strictly and are in *leaf-rank* space (a leaf's rank is the number of leaves
///   before it in menu order): the ranks at which the selection changes from the rank before.
///   Ranks where two toggles meet cancel, so two states select the same leaves exactly when their
///   bases and edges are equal, however their toggles differ (a group, or each of its children).
/// - `selectedBefore[i]` is the number of selected leaves of rank below `edges[i]`.
///
/// Cost: a write O(k + log n) for k toggles, plus O(k log k) to redo the edges; a leaf's state and
/// a subtree's selected count O(log k); memory 8 bytes a toggle and 8 an edge.
public struct SelectionState: Sendable {
    @usableFromInline var base = false
    @usableFromInline var toggles: [SelectionToggle] = []
    var toggleIDs: [String] = []
    @usableFromInline var edges: [Int32] = []
    @usableFromInline var selectedBefore: [Int32] = []

    /// Nothing selected.
    public init() {}

    /// Every leaf selected (`true`) or none: what select-all and clear-all leave. O(1).
    public init(all: Bool) { base = all }

    /// Whether a leaf no toggle covers is selected.
    public var allByDefault: Bool { base }

    /// Toggles the state holds (what a session's byte budget counts, with ``heapBytes``).
    public var toggleCount: Int { toggles.count }

    /// Bytes the state holds on the heap, counted as ``heapBytes(of:)`` counts an array.
    public var heapBytes: Int {
        var total =
            MenuModel.heapBytes(of: toggles) + MenuModel.heapBytes(of: edges) + MenuModel.heapBytes(of: selectedBefore)
            + MenuModel.heapBytes(of: toggleIDs)
        // An id of more than 15 UTF-8 bytes is a heap object of its own (32 bytes of header).
        for id in toggleIDs where id.utf8.count > 15 { total += (32 + id.utf8.count + 16 + 15) & ~15 }
        return total
    }

    /// The same selection in arrays of exactly the capacity they need. O(k).
    public var compacted: SelectionState {
        var copy = self
        copy.toggles = exactCapacity(toggles)
        copy.toggleIDs = exactCapacity(toggleIDs)
        copy.edges = exactCapacity(edges)
        copy.selectedBefore = exactCapacity(selectedBefore)
        return copy
    }

    /// The toggled nodes, in menu order.
    public var toggledNodes: [Menu.Node] { toggles.map { Int($0.node) } }

    /// Whether `leaf` is selected (for a group: whether the first leaf at or after it in menu
    /// order is, which is meaningless; ask ``selectedCount(in:of:)``). O(log k).
    public func isSelected(_ leaf: Menu.Node, in menu: Menu) -> Bool {
        isSelected(rank: menu.storage.leavesBefore[leaf])
    }

    /// Leaves of `node`'s subtree selected (0, the root, for the whole menu). O(log k).
    public func selectedCount(in node: Menu.Node, of menu: Menu) -> Int {
        let leavesBefore = menu.storage.leavesBefore
        let end = node == 0 ? menu.nodeCount + 1 : menu.subtreeEnd(node)
        return Int(selected(below: leavesBefore[end]) - selected(below: leavesBefore[node]))
    }

    /// Leaves selected in the whole menu. O(log k).
    public func selectedCount(of menu: Menu) -> Int { selectedCount(in: 0, of: menu) }

    /// Whether the leaf of rank `rank` is selected: the base, flipped at each edge at or below it.
    @inlinable func isSelected(rank: Int32) -> Bool {
        isSelected(passed: edges.upperBound(rank))
    }

    /// Whether a leaf with `passed` edges at or below its rank is selected: the base, flipped at
    /// each of them. O(1).
    @inlinable func isSelected(passed: Int) -> Bool { base != (passed % 2 == 1) }

    /// Selected leaves of rank below `rank`. O(log k).
    @inlinable func selected(below rank: Int32) -> Int32 {
        selected(below: rank, passed: edges.upperBound(rank))
    }

    /// Selected leaves of rank below `rank`, `passed` being the edges at or below it. O(1).
    @inlinable func selected(below rank: Int32, passed: Int) -> Int32 {
        guard passed > 0 else { return base ? rank : 0 }
        let last = passed - 1
        // After the (last + 1)-th edge the state is the base flipped that many times.
        let selectedFromLast = base != ((last + 1) % 2 == 1)
        return selectedBefore[last] + (selectedFromLast ? rank - edges[last] : 0)
    }

    // MARK: Writes

    /// Selects (`true`) or clears every leaf of `node`'s subtree (one leaf when `node` is a leaf),
    /// at any depth, but leaves the leaves of each of `excluded` (nodes of that subtree, say
    /// unavailable ones, whole groups or leaves) cleared. Returns whether the selected leaves
    /// changed. O(k + e log k + log n) for k toggles and e excluded nodes, plus redoing the edges.
    @discardableResult
    public mutating func set(
        _ node: Menu.Node, selected: Bool, in menu: Menu, excluding excluded: [Menu.Node] = []
    ) -> Bool {
        let before = (base, edges)
        let end = Int32(menu.subtreeEnd(node))
        let low = toggles.lowerBound(toggle: Int32(node))
        let high = toggles.lowerBound(toggle: end)
        toggles.removeSubrange(low ..< high)
        toggleIDs.removeSubrange(low ..< high)
        if inherited(at: Int32(node), insertionPoint: low) != selected {
            toggles.insert(SelectionToggle(node: Int32(node), end: end), at: low)
            toggleIDs.insert(menu.id(of: node), at: low)
        }
        if selected {
            // Every leaf of the subtree is selected now: flipping an excluded one clears it.
            for excludedNode in Self.outermost(excluded, in: menu) where excludedNode >= node && excludedNode < Int(end)
            {
                let at = toggles.lowerBound(toggle: Int32(excludedNode))
                if at < toggles.count && toggles[at].node == Int32(excludedNode) {
                    toggles.remove(at: at)
                    toggleIDs.remove(at: at)
                } else {
                    toggles.insert(
                        SelectionToggle(node: Int32(excludedNode), end: Int32(menu.subtreeEnd(excludedNode))), at: at)
                    toggleIDs.insert(menu.id(of: excludedNode), at: at)
                }
            }
        }
        rebuildEdges(in: menu)
        return before != (base, edges)
    }

    /// Selects or clears every leaf of the menu. Returns whether the selected leaves changed. O(1)
    /// but for the arrays it frees.
    @discardableResult
    public mutating func setAll(_ selected: Bool) -> Bool {
        let changed = base != selected || !edges.isEmpty
        self = SelectionState(all: selected)
        return changed
    }

    /// Selects or clears every leaf of the menu, but leaves the leaves of each of `excluded`
    /// (nodes, say unavailable ones) cleared. Returns whether the selected leaves changed. O(e log e) for e
    /// excluded leaves.
    @discardableResult
    public mutating func setAll(_ selected: Bool, excluding excluded: [Menu.Node], in menu: Menu) -> Bool {
        let before = (base, edges)
        self = SelectionState(all: selected)
        if selected {
            let nodes = Self.outermost(excluded, in: menu)
            toggles = nodes.map { SelectionToggle(node: Int32($0), end: Int32(menu.subtreeEnd($0))) }
            toggleIDs = nodes.map { menu.id(of: $0) }
            if !nodes.isEmpty { rebuildEdges(in: menu) }
        }
        return before != (base, edges)
    }

    /// The nodes of `nodes` (of `menu`, 1 to its node count; others are ignored) that no other
    /// of them encloses, ascending, each once. O(e log e).
    static func outermost(_ nodes: [Menu.Node], in menu: Menu) -> [Menu.Node] {
        var kept: [Menu.Node] = []
        var end = 0
        for node in Set(nodes).sorted() where node > 0 && node <= menu.nodeCount && node >= end {
            kept.append(node)
            end = menu.subtreeEnd(node)
        }
        return kept
    }

    /// The state in force at `node` before its own toggle: the base flipped by each toggle above
    /// it (each before `insertionPoint`, `node`'s place in `toggles`, whose subtree holds `node`).
    private func inherited(at node: Int32, insertionPoint: Int) -> Bool {
        var state = base
        for toggle in toggles[..<insertionPoint] where toggle.end > node { state.toggle() }
        return state
    }

    /// Redoes `edges` and `selectedBefore` from `toggles`: each toggle's start and end as ranks,
    /// sorted, pairs cancelled. O(k log k).
    mutating func rebuildEdges(in menu: Menu) {
        let leavesBefore = menu.storage.leavesBefore
        var ranks: [Int32] = []
        ranks.reserveCapacity(toggles.count * 2)
        for toggle in toggles {
            let (start, end) = (leavesBefore[Int(toggle.node)], leavesBefore[Int(toggle.end)])
            if start != end {  // a toggle with no leaves (an empty group) selects nothing
                ranks.append(start)
                ranks.append(end)
            }
        }
        ranks.sort()
        var kept: [Int32] = []
        kept.reserveCapacity(ranks.count)
        for rank in ranks {
            if kept.last == rank { kept.removeLast() } else { kept.append(rank) }
        }
        // A rank equal to the leaf count flips nothing: no leaf is at or after it.
        let leaves = leavesBefore[menu.nodeCount + 1]
        while let last = kept.last, last >= leaves { kept.removeLast() }
        edges = kept
        selectedBefore = []
        selectedBefore.reserveCapacity(kept.count)
        var total: Int32 = 0
        var state = base
        var from: Int32 = 0
        for edge in kept {
            if state { total += edge - from }
            selectedBefore.append(total)
            state.toggle()
            from = edge
        }
    }
}

extension SelectionState: Equatable, Hashable {
    /// Equal when they select the same leaves (of the menu both belong to), whatever their toggles.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.base == rhs.base && lhs.edges == rhs.edges }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(base)
        hasher.combine(edges)
    }
}

/// A node whose subtree's leaves are flipped, and one past its subtree's last node. 8 bytes.
@usableFromInline
struct SelectionToggle: Sendable, Hashable {
    @usableFromInline var node: Int32
    @usableFromInline var end: Int32
}

extension Array where Element == SelectionToggle {
    /// First index whose toggle's node is >= `node`.
    @inlinable func lowerBound(toggle node: Int32) -> Int { lowerBound(node) { $0.node }.index }
}

extension RandomAccessCollection where Element == Int32, Index == Int {
    /// The first index whose element is above `value` (ascending elements; for an array, how many
    /// are <= `value`): the first at or above `value + 1`, by the project's one binary search
    /// (``lowerBound(of:)``).
    @inlinable func upperBound(_ value: Int32) -> Int { lowerBound(of: value &+ 1).index }
}
