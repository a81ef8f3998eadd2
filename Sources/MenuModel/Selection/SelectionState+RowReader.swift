extension SelectionState {
    /// Reads a selection row after row, as a page lists them (preorder): a leaf's state and a
    /// group's selected count, the one per-row cost a page with selection pays.
    ///
    /// Invariant: `passed` is the number of edges at or below `lastRank`, the rank last asked
    /// (`Int32.min` before the first). Cost: for ranks asked in ascending order, as a page's rows
    /// are, a leaf O(1) amortized (the cursor walks the edges between two rows, and searches when
    /// more than eight lie between them); a group one binary search more, for its end; a rank
    /// below the last one asked, one binary search. Holds the state's arrays and the menu's leaf
    /// ranks (no copy).
    public struct RowReader {
        let base: Bool
        let edges: [Int32]
        let selectedBefore: [Int32]
        let menu: Menu
        let leavesBefore: [Int32]
        var passed = 0
        var lastRank = Int32.min

        public init(_ state: SelectionState, in menu: Menu) {
            base = state.base
            edges = state.edges
            selectedBefore = state.selectedBefore
            self.menu = menu
            leavesBefore = menu.storage.leavesBefore
        }

        /// Whether no leaf is selected, whatever is asked.
        public var selectsNothing: Bool { !base && edges.isEmpty }

        /// Whether `leaf` is selected.
        public mutating func isSelected(_ leaf: Menu.Node) -> Bool {
            advance(to: leavesBefore[leaf])
            return base != (passed % 2 == 1)
        }

        /// Leaves of `group`'s subtree selected; `leaves` is its leaf count (``Menu/leafCount(of:)``,
        /// which the caller has at hand).
        public mutating func selectedCount(in group: Menu.Node, leaves: Int) -> Int {
            let start = leavesBefore[group]
            advance(to: start)
            let selectedAtStart = selected(below: start, passed: passed)
            let end = start + Int32(truncatingIfNeeded: leaves)
            // Galloping from the cursor: a group's end is usually a few edges past its start.
            var low = passed
            var step = 1
            while low + step <= edges.count && edges[low + step - 1] <= end {
                low += step
                step &<<= 1
            }
            let endPassed = Self.upperBound(end, in: edges, from: low, to: min(low + step, edges.count))
            return Int(selected(below: end, passed: endPassed) - selectedAtStart)
        }

        /// Moves the cursor to `rank`: a walk for the next few edges, a search past them.
        mutating func advance(to rank: Int32) {
            if rank < lastRank || lastRank == .min {
                passed = Self.upperBound(rank, in: edges, from: 0)
            } else {
                var steps = 0
                while passed < edges.count && edges[passed] <= rank {
                    passed += 1
                    steps += 1
                    if steps == 8 {
                        passed = Self.upperBound(rank, in: edges, from: passed)
                        break
                    }
                }
            }
            lastRank = rank
        }

        /// Selected leaves of rank below `rank`, `passed` being the edges at or below it.
        func selected(below rank: Int32, passed: Int) -> Int32 {
            guard passed > 0 else { return base ? rank : 0 }
            let last = passed - 1
            let selectedFromLast = base != ((last + 1) % 2 == 1)
            return selectedBefore[last] + (selectedFromLast ? rank - edges[last] : 0)
        }

        /// How many of `edges` are at or below `rank`, knowing the first `from` are and (given `to`)
        /// that none from `to` on is.
        static func upperBound(_ rank: Int32, in edges: [Int32], from: Int, to end: Int? = nil) -> Int {
            var (low, high) = (from, end ?? edges.count)
            while low < high {
                let middle = (low + high) / 2
                if edges[middle] <= rank { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }
}
