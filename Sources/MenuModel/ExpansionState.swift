/// One session's expansion, kept outside the immutable ``Menu``: the groups whose state differs
/// from the menu's default, and a sparse overlay of how much each affected node's visible size
/// differs from its default size.
///
/// Invariants:
/// - `flipped` is ascending and holds exactly the groups whose state differs from the default.
/// - `levels[d]` holds, ascending by node, every depth-`d` node whose visible size in this session
///   differs from the default (and no other), with *running sums* of those differences that
///   restart at each parent: entries for one group's children are contiguous, so the difference
///   over a group's first k children is one binary search away, and a change only shifts the
///   sums of its changed siblings.
/// - Memory is O(changed groups × depth), never O(menu size). An empty state is the default view.
///
/// A state belongs to the menu it was built against: positions are not portable across menus
/// (use ``carried(through:onto:)`` with the reloads' ``MenuTranslation``s, or ``changedGroups(in:)``,
/// to carry a state over by id).
public struct ExpansionState: Sendable {
    @usableFromInline var flipped: [Int32] = []
    var levels: [[OverlayEntry]] = []

    /// The default expansion of any menu.
    public init() {}

    /// Groups whose state differs from the menu's default.
    public var changedGroupCount: Int { flipped.count }

    /// The groups this state changed and their state here, by id: what a store persists.
    public func changedGroups(in menu: Menu) -> [(id: String, isExpanded: Bool)] {
        flipped.map { node in
            let n = Int(node)
            return (menu.id(of: n), !menu.isExpandedByDefault(n))
        }
    }

    @inline(__always) func isFlipped(_ node: Int) -> Bool {
        flipped.lowerBound(of: Int32(node)).found
    }

    mutating func flip(_ node: Int) {
        let (index, found) = flipped.lowerBound(of: Int32(node))
        if found { flipped.remove(at: index) } else { flipped.insert(Int32(node), at: index) }
    }

    /// Adds a visible-size difference to `node` (at depth `depth`, child of `parent`, whose subtree
    /// ends at `parentEnd`), keeping running sums, and drops the entry when its difference returns
    /// to zero. O(log m + s) for m entries at that depth and s changed siblings after `node`.
    mutating func addDifference(node: Int, depth: Int, rows: Int32, leaves: Int32, parent: Int, parentEnd: Int) {
        guard rows != 0 || leaves != 0 else { return }
        if levels.count <= depth { levels.append(contentsOf: repeatElement([], count: depth + 1 - levels.count)) }
        levels[depth].addDifference(node: Int32(node), rows: rows, leaves: leaves,
                                    parent: Int32(parent), parentEnd: Int32(parentEnd))
        while levels.last?.isEmpty == true { levels.removeLast() }
    }
}

extension ExpansionState: Equatable {
    /// Two states are equal when the same groups differ from the default (the overlay follows).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.flipped == rhs.flipped }
}

extension ExpansionState: Hashable {
    public func hash(into hasher: inout Hasher) { hasher.combine(flipped) }
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
        var low = startIndex
        var high = endIndex
        while low < high {
            let mid = (low + high) / 2
            if self[mid] < value { low = mid + 1 } else { high = mid }
        }
        return (low, low < endIndex && self[low] == value)
    }
}

/// Read-only searches over one level's entries, for the level's array and for a buffer lent by
/// it alike (the page path reads levels without copying their arrays).
extension RandomAccessCollection where Element == OverlayEntry, Index == Int {
    /// First index whose node is >= `node`, and whether it is `node`.
    @inline(__always) func lowerBound(node: Int32, from start: Int = 0, to end: Int? = nil) -> (index: Int, found: Bool) {
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
    /// See ``ExpansionState/addDifference(node:depth:rows:leaves:parent:parentEnd:)``.
    mutating func addDifference(node: Int32, rows: Int32, leaves: Int32, parent: Int32, parentEnd: Int32) {
        let (index, found) = lowerBound(node: node)
        // The running sums of `node`'s earlier changed siblings (entries after `parent`).
        let before = index > 0 && self[index - 1].node > parent ? self[index - 1] : OverlayEntry(node: 0, rows: 0, leaves: 0)
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
