/// The rows of one table state that the client holds: a sparse array of slots, one per row of
/// the table, each the row at that position or nil (a placeholder: not fetched yet, or dropped).
///
/// Invariant: `slots.count` is the table's `count`, and a non-nil slot `i` holds the row the
/// server would send at index `i` for the state the cache is at (its `index` field may be stale;
/// ``row(at:)`` answers the position). Each slot is one reference (8 bytes), so a million-row
/// table costs 8 MB of slots plus the rows fetched.
///
/// Cost: ``row(at:)`` O(1); ``install(_:at:)`` O(rows); ``apply(_:changedGroup:)`` O(count) (one
/// move of the slots after the splice, plus a backward scan over the slots before it that stops
/// at the first cached top-level row).
struct RowCache: Sendable {
    /// One fetched row behind a reference, so that a slot is one word and a splice moves words.
    final class Box: Sendable {
        let row: MenuRow
        init(_ row: MenuRow) { self.row = row }
    }

    private(set) var slots: ContiguousArray<Box?>

    init(count: Int) { slots = ContiguousArray(repeating: nil, count: count) }

    var count: Int { slots.count }

    func row(at index: Int) -> MenuRow? {
        guard index >= 0, index < slots.count, let box = slots[index] else { return nil }
        var row = box.row
        row.index = index
        return row
    }

    /// True when every slot of `range` (clamped to the table) holds a row.
    func isFilled(_ range: Range<Int>) -> Bool {
        slots[range.clamped(to: 0 ..< slots.count)].allSatisfy { $0 != nil }
    }

    /// Stores `rows` fetched at `offset` for the cache's current state.
    mutating func install(_ rows: [MenuRow], at offset: Int) {
        for (position, row) in rows.enumerated() where offset + position < slots.count {
            slots[offset + position] = Box(row)
        }
    }

    /// A splice the cache cannot apply: it does not fit the table.
    struct SpliceOutOfRange: Error {}

    /// What is known of the group whose row is just before a splice.
    enum ChangedGroup: Sendable {
        /// A toggle's or a set's answer: the group and its state now.
        case group(id: String, isExpanded: Bool)
        /// A reveal's answer: the group before the splice was collapsed and is expanded now.
        case revealed
        /// The changes feed: only where rows moved.
        case unknown
    }

    /// Applies `splice` as the server did: `removed` slots at `at` go, `inserted` placeholders come.
    /// The rows before `at` whose content the change alters are brought up to date or dropped:
    /// - the row at `at - 1` when it is a group (the group toggled, set or revealed): updated from
    ///   `changedGroup` when that names it or says it was revealed (a write's answer), dropped
    ///   otherwise (the changes feed says only where rows moved);
    /// - every group before it whose visible descendants include the whole removed block (its
    ///   enclosing groups): `visibleDescendantCount` grows by `inserted - removed`;
    /// - a group whose descendants cover only part of that block: dropped.
    /// Returns the positions (before `at`, so the same before and after) of the rows touched.
    mutating func apply(_ splice: MenuSplice, changedGroup: ChangedGroup) throws(SpliceOutOfRange) -> [Int] {
        try requireFit(splice)
        let (at, removed, inserted) = (splice.at, splice.removed, splice.inserted)
        var touched: [Int] = []
        if at > 0 {
            let changedPosition = at - 1
            // Rows at a depth of `depthBound` or more cannot enclose the splice (a cached row between an
            // enclosing group and the splice is inside that group, so deeper than it).
            var depthBound = Int.max
            var position = changedPosition
            while position >= 0, depthBound > 0 {
                defer { position -= 1 }
                guard let row = slots[position]?.row, row.depth < depthBound else { continue }
                depthBound = row.depth
                guard row.isGroup else { continue }
                let descendants = row.visibleDescendantCount ?? 0
                if position == changedPosition {
                    let isExpanded: Bool? =
                        switch changedGroup {
                        case .group(let id, let isExpanded): id == row.id ? isExpanded : nil
                        case .revealed: row.isExpanded == false ? true : nil
                        case .unknown: nil
                        }
                    if let isExpanded, descendants >= removed {
                        var updated = row
                        updated.isExpanded = isExpanded
                        updated.visibleDescendantCount = descendants - removed + inserted
                        slots[position] = Box(updated)
                    } else {
                        slots[position] = nil
                    }
                    touched.append(position)
                } else if position + descendants >= changedPosition + removed {
                    var updated = row
                    updated.visibleDescendantCount = descendants - removed + inserted
                    slots[position] = Box(updated)
                    touched.append(position)
                } else if position + descendants >= changedPosition {
                    slots[position] = nil
                    touched.append(position)
                }
            }
        }
        slots.replaceSubrange(at ..< at + removed, with: repeatElement(nil, count: inserted))
        return touched.reversed()
    }

    /// Applies `splice` of a menu reload: `removed` slots at `at` go, `inserted` placeholders come;
    /// no other row is touched (the reload names the rows it changed, ``drop(_:)``).
    mutating func replace(_ splice: MenuSplice) throws(SpliceOutOfRange) {
        try requireFit(splice)
        slots.replaceSubrange(
            splice.at ..< splice.at + splice.removed, with: repeatElement(nil, count: splice.inserted))
    }

    /// Throws unless `splice`'s counts are non-negative and its removed rows lie in the table.
    private func requireFit(_ splice: MenuSplice) throws(SpliceOutOfRange) {
        let (at, removed, inserted) = (splice.at, splice.removed, splice.inserted)
        guard at >= 0, removed >= 0, inserted >= 0, at <= slots.count, removed <= slots.count - at else {
            throw SpliceOutOfRange()
        }
    }

    /// Drops the rows a selection changed to placeholders: the cached rows of `count` rows from
    /// `at` and every cached row whose id is one of `ids` (the node's ancestors); returns their
    /// positions, ascending. O(count) plus O(cached rows) when `ids` is not empty.
    mutating func dropRows(from at: Int, count: Int, withIDs ids: [String]) throws(SpliceOutOfRange) -> [Int] {
        guard at >= 0, count >= 0, at + count <= slots.count else { throw SpliceOutOfRange() }
        var dropped: [Int] = []
        for position in at ..< at + count where slots[position] != nil {
            slots[position] = nil
            dropped.append(position)
        }
        if !ids.isEmpty {
            let wanted = Set(ids)
            for position in 0 ..< at where slots[position].map({ wanted.contains($0.row.id) }) == true {
                slots[position] = nil
                dropped.append(position)
            }
        }
        return dropped.sorted()
    }

    /// Drops the rows at `positions` to placeholders (rows whose content changed).
    mutating func drop(_ positions: [Int]) throws(SpliceOutOfRange) {
        guard positions.allSatisfy({ $0 >= 0 && $0 < slots.count }) else { throw SpliceOutOfRange() }
        for position in positions { slots[position] = nil }
    }
}
