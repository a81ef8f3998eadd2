/// The tree a search shows: every matching node and every ancestor of one, in preorder, each
/// ancestor expanded (a matched group none of whose descendants matches is shown collapsed). It
/// does not depend on any session's expansion, so one value serves every session.
///
/// Invariant: `nodes` is strictly increasing and holds exactly `matches` and their ancestors;
/// `descendants[i]` is how many entries after `i` lie in `nodes[i]`'s subtree (so entry `i`'s
/// subtree is `i ... i + descendants[i]`); `matches` is strictly increasing; `places[i]` is entry
/// `i`'s place among the shown children of its parent (from 1) and `setSizes[i]` how many of
/// them are shown.
/// Memory: 16 bytes per shown node plus 4 per match. Cost: building is O(matches + shown nodes),
/// one pass (about 10 ns a match on the 1.1M-node menu);
/// ``count`` and ``leafCount`` O(1); a page O(limit) (no search for its first row: entries are
/// indexed by row); ``index(ofNode:)`` O(log count).
public struct FilteredView: Sendable {
    public let menu: Menu
    /// The matching nodes, in preorder.
    public let matches: [Int32]
    let nodes: [Int32]
    let descendants: [Int32]
    let places: [Int32]
    let setSizes: [Int32]
    /// Shown nodes that are rows (not groups): every one of them is a match.
    public let leafCount: Int

    /// The view of `matches` (strictly increasing positions of `menu`) with their ancestors.
    /// One pass over `matches`: each match's record is read once (its parent, and whether it is
    /// a leaf), ancestors are walked only up to the innermost entry still open, and the open
    /// entries keep their subtree's end beside them, so closing one reads no record.
    public init(menu: Menu, matches: [Int32]) {
        var nodes: [Int32] = []
        var descendants: [Int32] = []
        nodes.reserveCapacity(matches.count)
        descendants.reserveCapacity(matches.count)
        var leafCount = 0
        // The entries shown so far whose subtree may still take entries, outermost first:
        // (entry index, one past the node's last descendant).
        var open: [(entry: Int32, subtreeEnd: Int32)] = []
        var chain: [Int32] = []
        menu.storage.records.withUnsafeBufferPointer { records in
            for match in matches {
                precondition(match > (nodes.last ?? 0), "matches must be strictly increasing positions")
                while let last = open.last, last.subtreeEnd <= match {
                    descendants[Int(last.entry)] = Int32(nodes.count) - last.entry - 1
                    open.removeLast()
                }
                // The ancestors not shown yet: those below the innermost open entry, which encloses the match.
                let shownAncestor = open.last.map { nodes[Int($0.entry)] } ?? 0
                let record = records[Int(match)]
                var parent = record.parent
                if parent != shownAncestor && parent > 0 {
                    chain.removeAll(keepingCapacity: true)
                    while parent != shownAncestor && parent > 0 {
                        chain.append(parent)
                        parent = records[Int(parent)].parent
                    }
                    for ancestor in chain.reversed() {
                        open.append((Int32(nodes.count), records[Int(ancestor)].subtreeEnd))
                        nodes.append(ancestor)
                        descendants.append(0)
                    }
                }
                open.append((Int32(nodes.count), record.subtreeEnd))
                nodes.append(match)
                descendants.append(0)
                if record.flags & Menu.Storage.groupFlag == 0 { leafCount += 1 }
            }
        }
        for last in open { descendants[Int(last.entry)] = Int32(nodes.count) - last.entry - 1 }
        self.menu = menu
        self.matches = matches
        self.nodes = nodes
        self.descendants = descendants
        self.leafCount = leafCount
        (places, setSizes) = Self.siblingPlaces(descendants: descendants)
    }

    /// Each entry's place among the shown children of its parent, and their number: one pass
    /// with the open entries on a stack (entry `i`'s parent is the innermost open entry whose
    /// subtree reaches `i`), then one to hand each entry its parent's count. O(shown).
    private static func siblingPlaces(descendants: [Int32]) -> (places: [Int32], setSizes: [Int32]) {
        let count = descendants.count
        var places = [Int32](repeating: 0, count: count)
        var parents = [Int32](repeating: -1, count: count)  // -1: the root
        var shownChildren = [Int32](repeating: 0, count: count)
        var topLevel: Int32 = 0
        var open: [(entry: Int32, last: Int32)] = []
        for index in 0 ..< count {
            while let innermost = open.last, innermost.last < Int32(index) { open.removeLast() }
            if let parent = open.last?.entry {
                shownChildren[Int(parent)] += 1
                places[index] = shownChildren[Int(parent)]
                parents[index] = parent
            } else {
                topLevel += 1
                places[index] = topLevel
            }
            if descendants[index] > 0 { open.append((Int32(index), Int32(index) + descendants[index])) }
        }
        let setSizes = parents.map { $0 < 0 ? topLevel : shownChildren[Int($0)] }
        return (places, setSizes)
    }

    /// Shown rows, groups and rows alike.
    public var count: Int { nodes.count }

    /// Node positions and counts this view holds: what a cache bounds its memory by.
    public var positionsHeld: Int { matches.count + 4 * nodes.count }

    /// The node shown at row `index` (0 ..< count).
    public func node(at index: Int) -> Menu.Node { Int(nodes[index]) }

    /// Shown rows in `node`'s subtree, not counting it (0 for a row or a collapsed matched group).
    public func descendantCount(at index: Int) -> Int { Int(descendants[index]) }

    /// Row `index`'s place among the shown children of its parent, from 1 (`aria-posinset`). O(1).
    public func positionInSet(at index: Int) -> Int { Int(places[index]) }

    /// How many children of row `index`'s parent are shown, itself included (`aria-setsize`). O(1).
    public func setSize(at index: Int) -> Int { Int(setSizes[index]) }

    /// The row `node` is shown at, nil when the view does not show it. O(log count).
    public func index(ofNode node: Menu.Node) -> Int? {
        var low = 0
        var high = nodes.count
        while low < high {
            let middle = (low + high) / 2
            if Int(nodes[middle]) < node { low = middle + 1 } else { high = middle }
        }
        return low < nodes.count && Int(nodes[low]) == node ? low : nil
    }

    /// Calls `body` for shown rows `offset ..< offset + limit` in order (fewer at the end). O(limit).
    public func forEachRow(offset: Int, limit: Int, _ body: (VisibleNode, _ descendants: Int) -> Void) {
        guard offset >= 0, limit > 0, offset < nodes.count else { return }
        for index in offset ..< offset + min(limit, nodes.count - offset) {
            let shown = Int(descendants[index])
            body(VisibleNode(index: index, node: Int(nodes[index]), isExpanded: shown > 0), shown)
        }
    }
}

extension SearchIndex {
    /// The nodes matching every part of `query`, in preorder: the text (``matches(folded:)``) and
    /// each filter. Refuses a filter naming an attribute no node has. O(scan + matches · filters)
    /// with a text; a filter alone reads every node's attributes (O(n) hash lookups).
    public func matches(for query: SearchQuery, in menu: Menu) throws(SearchQueryError) -> [Int32] {
        try checkFilters(of: query)
        let filters = query.filters
        func holds(_ node: Int32) -> Bool {
            guard !filters.isEmpty else { return true }
            guard let attributes = menu.attributes(of: Int(node)) else { return false }
            return filters.allSatisfy { $0.holds(for: attributes[$0.name]) }
        }
        if query.text != nil {
            let found = matches(folded: query.folded)
            return filters.isEmpty ? found : found.filter(holds)
        }
        return menu.nodes.lazy.map { Int32($0) }.filter(holds)
    }

    /// Refuses a filter of `query` naming an attribute no node of the menu has. O(filters).
    public func checkFilters(of query: SearchQuery) throws(SearchQueryError) {
        for filter in query.filters where !attributeNames.contains(filter.name) { throw .unknownAttribute(filter.name) }
    }

    /// The filtered view of `query` on `menu` (the menu this index was built from).
    public func view(for query: SearchQuery, in menu: Menu) throws(SearchQueryError) -> FilteredView {
        FilteredView(menu: menu, matches: try matches(for: query, in: menu))
    }
}
