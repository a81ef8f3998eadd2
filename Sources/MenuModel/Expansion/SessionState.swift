/// One session's state, kept outside the immutable ``Menu``: its expansion and its ``selection``.
///
/// The expansion is a base mode for the whole tree,
/// marks that set another mode for one group's subtree, the groups flipped against the mode in
/// force at them, and a sparse overlay of how much each affected node's visible size differs from
/// its reference size.
///
/// The mode in force at a node is the mode of the nearest mark on it or above it, else `base`.
/// A group is expanded when its mode expands it (``ExpansionMode/default``: as the config says),
/// unless it is flipped. A node's *reference size* is what it shows when every group of its
/// subtree, itself included, follows its *context mode* (the mode in force at its parent; `base`
/// for the top level) with nothing flipped, read in O(1) from the menu (``Menu/Storage/size(of:mode:)``).
///
/// Invariants:
/// - `flipped` is ascending and holds exactly the groups whose state differs from their mode's.
/// - `marks` is ascending by node, each with its subtree end in the menu the state belongs to (so
///   containment is known without the menu) and its mode; no mark has the mode already in force
///   at its parent (such a mark changes nothing and is never kept).
/// - `levels[d]` holds, ascending by node, every depth-`d` node whose visible size in this session
///   differs from its reference size (and no other), with *running sums* of those differences that
///   restart at each parent: entries for one group's children are contiguous, so the difference
///   over a group's first k children is one binary search away, and a change only shifts the
///   sums of its changed siblings. Only the marks, the flips and their ancestors have entries.
/// - Memory is O((marks + flips) × depth), never O(menu size) nor O(groups a bulk change affects):
///   expanding or collapsing everything leaves a state of no entries, a recursive change one mark
///   and its ancestors' entries. An empty state (`base` default) is the default view.
///
/// A state belongs to the menu it was built against: positions are not portable across menus
/// (use ``carried(through:onto:)`` with the reloads' ``MenuTranslation``s, or ``portable`` and
/// ``init(portable:in:ignoredIDs:)``, to carry a state over by id).
public struct SessionState: Sendable {
    @usableFromInline var base: ExpansionMode = .default
    @usableFromInline var flipped: [Int32] = []
    @usableFromInline var marks: [SubtreeMark] = []
    var levels: [[OverlayEntry]] = []
    /// The leaves the session has chosen (nothing by default). Independent of the expansion: a
    /// change of either leaves the other as it was.
    public var selection = SelectionState()

    /// The default expansion of any menu, nothing selected.
    public init() {}

    /// Every group following `base`, nothing flipped, with `selection`: what expand-all and
    /// collapse-all leave (they keep the selection). O(1).
    public init(base: ExpansionMode, selection: SelectionState = SelectionState()) {
        self.base = base
        self.selection = selection
    }

    /// The same selection with every group following `base`, nothing flipped. O(1).
    public func withExpansion(_ base: ExpansionMode) -> SessionState {
        SessionState(base: base, selection: selection)
    }

    /// Whether the two states expand the same groups, whatever they select.
    public func hasSameExpansion(as other: SessionState) -> Bool {
        base == other.base && flipped == other.flipped && marks == other.marks
    }

    /// The mode of groups outside every mark.
    public var baseMode: ExpansionMode { base }

    /// Entries the state holds: flipped groups plus marks (what a store's cap counts).
    public var changedGroupCount: Int { flipped.count + marks.count }

    /// Marks the state holds (subtrees set to one mode by a recursive change).
    public var markCount: Int { marks.count }

    /// Overlay entries over all levels: with ``changedGroupCount``, the state's whole size.
    public var overlayEntryCount: Int { levels.reduce(0) { $0 + $1.count } }

    /// The flipped groups and their state here, by id. Complete only when ``baseMode`` is
    /// `.default` and there are no marks (``markCount`` 0); a store persists ``portable`` instead.
    public func changedGroups(in menu: Menu) -> [(id: String, isExpanded: Bool)] {
        explicitStates { menu.isExpandedByDefault(Int($0)) }.map { (menu.id(of: Int($0.node)), $0.isExpanded) }
    }

    /// Each flipped group with its state in this session, given the config default of a node. One
    /// merge of the flips with the marks' ranges: O(flips + marks).
    func explicitStates(defaultOf: (Int32) -> Bool) -> [(node: Int32, isExpanded: Bool)] {
        var enclosing: [(end: Int32, mode: ExpansionMode)] = []
        var next = 0
        return flipped.map { node in
            while next < marks.count && marks[next].node <= node {
                while let last = enclosing.last, last.end <= marks[next].node { enclosing.removeLast() }
                enclosing.append((marks[next].end, marks[next].mode))
                next += 1
            }
            while let last = enclosing.last, last.end <= node { enclosing.removeLast() }
            let mode = enclosing.last?.mode ?? base
            let byMode =
                switch mode {
                case .default: defaultOf(node)
                case .expanded: true
                case .collapsed: false
                }
            return (node, !byMode)
        }
    }

    @inline(__always) func isFlipped(_ node: Int) -> Bool {
        flipped.lowerBound(of: Int32(node)).found
    }

    /// The mode of the mark on `node`, if it has one. O(log marks).
    @inlinable @inline(__always) func mark(at node: Int) -> ExpansionMode? {
        guard !marks.isEmpty else { return nil }
        let (index, found) = marks.lowerBound(mark: Int32(node))
        return found ? marks[index].mode : nil
    }

    mutating func flip(_ node: Int) {
        let (index, found) = flipped.lowerBound(of: Int32(node))
        if found { flipped.remove(at: index) } else { flipped.insert(Int32(node), at: index) }
    }

    /// Forgets every flip and mark in `node ..< end` (a group's subtree) and the overlay entries
    /// of its descendants (`node`'s own entry stays). O(depth · log m) plus the entries removed.
    mutating func clear(subtreeOf node: Int, end: Int) {
        flipped.removeSubrange(flipped.lowerBound(of: Int32(node)).index ..< flipped.lowerBound(of: Int32(end)).index)
        marks.removeSubrange(marks.lowerBound(mark: Int32(node)).index ..< marks.lowerBound(mark: Int32(end)).index)
        for depth in levels.indices where !levels[depth].isEmpty {
            let low = levels[depth].lowerBound(node: Int32(node + 1)).index
            let high = levels[depth].lowerBound(node: Int32(end), from: low).index
            levels[depth].removeSubrange(low ..< high)
        }
        while levels.last?.isEmpty == true { levels.removeLast() }
    }

    /// Adds a mark; none may be on `node` already. O(marks) for the insert.
    mutating func insertMark(_ node: Int, end: Int, mode: ExpansionMode) {
        marks.insert(
            SubtreeMark(node: Int32(node), end: Int32(end), mode: mode), at: marks.lowerBound(mark: Int32(node)).index)
    }

    /// Adds a visible-size difference to `node` (at depth `depth`, child of `parent`, whose subtree
    /// ends at `parentEnd`), keeping running sums, and drops the entry when its difference returns
    /// to zero. O(log m + s) for m entries at that depth and s changed siblings after `node`.
    mutating func addDifference(node: Int, depth: Int, rows: Int32, leaves: Int32, parent: Int, parentEnd: Int) {
        guard rows != 0 || leaves != 0 else { return }
        if levels.count <= depth { levels.append(contentsOf: repeatElement([], count: depth + 1 - levels.count)) }
        levels[depth].addDifference(
            node: Int32(node), rows: rows, leaves: leaves,
            parent: Int32(parent), parentEnd: Int32(parentEnd))
        while levels.last?.isEmpty == true { levels.removeLast() }
    }
}

extension SessionState: Equatable {
    /// Two states are equal when they hold the same base, marks and flips (the overlay follows)
    /// and select the same leaves. Structural for the expansion: two different states may still
    /// show the same table (say, base `.expanded` and base `.default` on a menu whose groups are all
    /// expanded by default).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.hasSameExpansion(as: rhs) && lhs.selection == rhs.selection
    }
}

extension SessionState: Hashable {
    public func hash(into hasher: inout Hasher) {
        hasher.combine(base)
        hasher.combine(flipped)
        hasher.combine(marks)
        hasher.combine(selection)
    }
}

/// A group whose subtree follows `mode` (see ``SessionState``): its node and one past its
/// subtree's last node, in the menu the state belongs to. 12 bytes.
@usableFromInline
struct SubtreeMark: Sendable, Hashable {
    @usableFromInline var node: Int32
    @usableFromInline var end: Int32
    @usableFromInline var mode: ExpansionMode

    @usableFromInline init(node: Int32, end: Int32, mode: ExpansionMode) {
        self.node = node
        self.end = end
        self.mode = mode
    }
}

extension RandomAccessCollection where Element == SubtreeMark, Index == Int {
    /// First index whose mark's node is >= `node`, and whether it is `node`. Ascending marks.
    @inlinable @inline(__always) func lowerBound(mark node: Int32) -> (index: Int, found: Bool) {
        lowerBound(node) { $0.node }
    }
}

extension RandomAccessCollection where Index == Int {
    /// First index whose element's `key` is >= `value`, and whether it equals `value`. Elements
    /// ascend by `key`.
    @inlinable @inline(__always) func lowerBound(_ value: Int32, by key: (Element) -> Int32) -> (
        index: Int, found: Bool
    ) {
        var low = startIndex
        var high = endIndex
        while low < high {
            let mid = (low + high) / 2
            if key(self[mid]) < value { low = mid + 1 } else { high = mid }
        }
        return (low, low < endIndex && key(self[low]) == value)
    }
}

/// A node whose visible size differs from its default, with running sums over its changed siblings.
struct OverlayEntry: Sendable {
    var node: Int32
    /// Sum of row-count differences of this entry and the entries before it with the same parent.
    var rows: Int32
    /// The same for leaf rows.
    var leaves: Int32
}

extension RandomAccessCollection where Element == Int32, Index == Int {
    /// First index whose element is >= `value`, and whether it equals `value`. Ascending elements.
    @inlinable @inline(__always) func lowerBound(of value: Int32) -> (index: Int, found: Bool) {
        lowerBound(value) { $0 }
    }
}

/// Read-only searches over one level's entries, for the level's array and for a buffer lent by
/// it alike (the page path reads levels without copying their arrays).
extension RandomAccessCollection where Element == OverlayEntry, Index == Int {
    /// First index whose node is >= `node`, and whether it is `node`.
    @inline(__always) func lowerBound(node: Int32, from start: Int = 0, to end: Int? = nil) -> (index: Int, found: Bool)
    {
        var low = start
        var high = end ?? count
        let limit = high
        while low < high {
            let mid = (low + high) / 2
            if self[mid].node < node { low = mid + 1 } else { high = mid }
        }
        return (low, low < limit && self[low].node == node)
    }

    /// Sum of differences of the entries `entries`, which must start at the first entry of a
    /// group's children (running sums restart there). O(1).
    @inline(__always) func total(_ entries: Range<Int>) -> (rows: Int32, leaves: Int32) {
        guard !entries.isEmpty else { return (0, 0) }
        let last = self[entries.upperBound - 1]
        return (last.rows, last.leaves)
    }
}

extension Array where Element == OverlayEntry {
    /// See ``SessionState/addDifference(node:depth:rows:leaves:parent:parentEnd:)``.
    mutating func addDifference(node: Int32, rows: Int32, leaves: Int32, parent: Int32, parentEnd: Int32) {
        let (index, found) = lowerBound(node: node)
        // The running sums of `node`'s earlier changed siblings (entries after `parent`).
        let before =
            index > 0 && self[index - 1].node > parent ? self[index - 1] : OverlayEntry(node: 0, rows: 0, leaves: 0)
        if found {
            let own = (self[index].rows - before.rows, self[index].leaves - before.leaves)
            if own.0 + rows == 0 && own.1 + leaves == 0 { remove(at: index) }
        } else {
            insert(OverlayEntry(node: node, rows: before.rows, leaves: before.leaves), at: index)
        }
        // Every running sum from `index` to the end of the siblings' run includes this node's
        // difference (or, after a removal, no longer includes its old one, exactly -rows, -leaves).
        var i = index
        while i < count && self[i].node < parentEnd {
            self[i].rows += rows
            self[i].leaves += leaves
            i += 1
        }
    }
}
