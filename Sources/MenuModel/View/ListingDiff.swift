/// The splices that take one listing of rows to another, and the rows that stayed but whose
/// content changed: what a table view applies when the menu under a session is reloaded (issue 26
/// §2), instead of reloading every row.
///
/// The rows kept are a longest common subsequence of the two listings, which, since a key is in
/// each listing at most once, is a longest increasing subsequence of the old positions taken in
/// the new order (found in O(n log n), n the rows of the longer listing). Every other old row is
/// removed and every other new row inserted, in as few splices as the kept rows allow: a dish
/// added is one splice, a dish moved two.
///
/// Invariant: applying ``changes`` in order to the old listing (each removing `removed` rows at
/// `at` and inserting `inserted` rows, which are the new listing's rows at `at ..< at + inserted`)
/// gives the new listing; ``reconfigured`` are new indices of kept rows, ascending.
/// Cost: O(n log n) time, O(n) memory; between two menus, an id look-up per old row besides.
public struct ListingDiff: Sendable, Equatable {
    /// The splices, in the order they apply.
    public var changes: [RowChange]
    /// Indices in the new listing of rows kept whose content changed.
    public var reconfigured: [Int]

    public init(changes: [RowChange], reconfigured: [Int]) {
        self.changes = changes
        self.reconfigured = reconfigured
    }

    /// The diff from `old` to `new` (each key at most once per listing); `sameContent(i, j)` tells
    /// whether old row `i` and new row `j`, which have the same key, look the same.
    public init<Key: Hashable>(old: [Key], new: [Key], sameContent: (_ old: Int, _ new: Int) -> Bool = { _, _ in true })
    {
        var oldIndex: [Key: Int] = [:]
        oldIndex.reserveCapacity(old.count)
        for (index, key) in old.enumerated() { oldIndex[key] = index }
        // The new rows the old listing has, in new order, with their old position.
        var pairs: [(old: Int, new: Int)] = []
        for (index, key) in new.enumerated() {
            if let position = oldIndex[key] { pairs.append((position, index)) }
        }
        self.init(pairs: pairs, oldCount: old.count, newCount: new.count, sameContent: sameContent)
    }

    /// The diff from `old` to `new` whose keys are in `0 ..< keyCount` (a negative key is in no
    /// other listing): one array instead of a hash table, for listings of a million rows.
    public init(
        old: [Int32], new: [Int32], keyCount: Int, sameContent: (_ old: Int, _ new: Int) -> Bool = { _, _ in true }
    ) {
        var oldIndex = [Int32](repeating: -1, count: keyCount)
        for (index, key) in old.enumerated() where key >= 0 { oldIndex[Int(key)] = Int32(index) }
        var pairs: [(old: Int, new: Int)] = []
        pairs.reserveCapacity(min(old.count, new.count))
        for (index, key) in new.enumerated() where key >= 0 {
            let position = oldIndex[Int(key)]
            if position >= 0 { pairs.append((Int(position), index)) }
        }
        self.init(pairs: pairs, oldCount: old.count, newCount: new.count, sameContent: sameContent)
    }

    /// The splices around the longest run of `pairs` (kept rows) ascending in both listings.
    private init(
        pairs: [(old: Int, new: Int)], oldCount: Int, newCount: Int, sameContent: (_ old: Int, _ new: Int) -> Bool
    ) {
        let kept = Self.longestIncreasing(pairs)
        var changes: [RowChange] = []
        var reconfigured: [Int] = []
        var (nextOld, nextNew) = (0, 0)
        for pair in kept + [(oldCount, newCount)] {
            let removed = pair.old - nextOld
            let inserted = pair.new - nextNew
            if removed > 0 || inserted > 0 {
                changes.append(RowChange(at: nextNew, inserted: inserted, removed: removed))
            }
            if pair.old < oldCount, !sameContent(pair.old, pair.new) { reconfigured.append(pair.new) }
            (nextOld, nextNew) = (pair.old + 1, pair.new + 1)
        }
        self.init(changes: changes, reconfigured: reconfigured)
    }

    /// A longest subsequence of `pairs` (ascending in `new`) that is ascending in `old` too.
    private static func longestIncreasing(_ pairs: [(old: Int, new: Int)]) -> [(old: Int, new: Int)] {
        // tails[k]: the pair index ending the best subsequence of length k + 1 found so far.
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: pairs.count)
        for (index, pair) in pairs.enumerated() {
            var (low, high) = (0, tails.count)
            while low < high {
                let middle = (low + high) / 2
                if pairs[tails[middle]].old < pair.old { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: [(old: Int, new: Int)] = []
        var index = tails.last ?? -1
        while index >= 0 {
            result.append(pairs[index])
            index = previous[index]
        }
        return result.reversed()
    }
}

extension ListingDiff {
    /// The diff from `old`'s rows to `new`'s (the same session on two menus): rows are matched by
    /// node id; a kept row is reconfigured when any field a row carries but its index differs:
    /// title (every locale), attributes, depth, parent, place among its siblings and their number,
    /// group-ness, expansion, child count, visible descendants, leaves or selection (a leaf's
    /// state, a group's count). O(rows · log rows) plus the walk
    /// of both listings.
    public static func between(_ old: FlattenedView, _ new: FlattenedView) -> ListingDiff {
        let (oldMenu, newMenu) = (old.menu, new.menu)
        let oldRows = ListedRows(old)
        let newRows = ListedRows(new)
        let locales = max(1, min(oldMenu.locales.count, newMenu.locales.count))
        let sameLocales = oldMenu.locales == newMenu.locales
        // Keys are the new menu's nodes: an old row's is the node its id names there (-1: gone).
        return ListingDiff(
            old: oldRows.nodes.map { Int32(newMenu.node(withID: oldMenu.id(of: $0.node)) ?? -1) },
            new: newRows.nodes.map { Int32($0.node) }, keyCount: newMenu.nodeCount + 1
        ) { i, j in
            let (a, b) = (oldRows.nodes[i].node, newRows.nodes[j].node)
            guard sameLocales, oldMenu.isGroup(a) == newMenu.isGroup(b),
                oldRows.nodes[i].isExpanded == newRows.nodes[j].isExpanded,
                oldMenu.depth(of: a) == newMenu.depth(of: b),
                oldMenu.childCount(of: a) == newMenu.childCount(of: b),
                oldMenu.siblingCount(of: a) == newMenu.siblingCount(of: b),
                oldMenu.siblingPosition(of: a) == newMenu.siblingPosition(of: b),
                oldRows.descendants(of: i) == newRows.descendants(of: j),
                oldMenu.parent(of: a).map(oldMenu.id(of:)) == newMenu.parent(of: b).map(newMenu.id(of:)),
                oldMenu.attributes(of: a) == newMenu.attributes(of: b),
                oldMenu.leafCount(of: a) == newMenu.leafCount(of: b),
                oldMenu.isGroup(a)
                    ? old.state.selection.selectedCount(in: a, of: oldMenu)
                        == new.state.selection.selectedCount(in: b, of: newMenu)
                    : old.state.selection.isSelected(a, in: oldMenu) == new.state.selection.isSelected(b, in: newMenu)
            else { return false }
            return (0 ..< locales).allSatisfy { oldMenu.title(of: a, locale: $0) == newMenu.title(of: b, locale: $0) }
        }
    }
}

/// Every row of one listing, with where each row's subtree ends: what ``ListingDiff/between(_:_:)``
/// compares. O(rows) time and memory.
private struct ListedRows {
    var nodes: [VisibleNode] = []
    /// `ends[i]`: the index of the first row after row `i` that is not below it.
    private var ends: [Int32] = []

    init(_ view: FlattenedView) {
        let menu = view.menu
        nodes.reserveCapacity(view.count)
        view.forEachVisibleNode(offset: 0, limit: view.count) { nodes.append($0) }
        ends = [Int32](repeating: Int32(nodes.count), count: nodes.count)
        var open: [(row: Int, depth: Int)] = []
        for (row, visible) in nodes.enumerated() {
            let depth = menu.depth(of: visible.node)
            while let last = open.last, last.depth >= depth {
                ends[last.row] = Int32(row)
                open.removeLast()
            }
            open.append((row, depth))
        }
    }

    /// The rows below row `i` in this listing (a collapsed group's or a leaf's: 0).
    func descendants(of i: Int) -> Int { Int(ends[i]) - i - 1 }
}
