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
        @usableFromInline let state: SelectionState
        @usableFromInline let leavesBefore: [Int32]
        @usableFromInline var passed = 0
        @usableFromInline var lastRank = Int32.min

        public init(_ state: SelectionState, in menu: Menu) {
            self.state = state
            leavesBefore = menu.storage.leavesBefore
        }

        /// Whether no leaf is selected, whatever is asked.
        public var selectsNothing: Bool { !state.base && state.edges.isEmpty }

        /// Whether `leaf` is selected.
        @inlinable public mutating func isSelected(_ leaf: Menu.Node) -> Bool {
            advance(to: leavesBefore[leaf])
            return state.isSelected(passed: passed)
        }

        /// Leaves of `group`'s subtree selected; `leaves` is its leaf count (``Menu/leafCount(of:)``,
        /// which the caller has at hand).
        public mutating func selectedCount(in group: Menu.Node, leaves: Int) -> Int {
            let edges = state.edges
            let start = leavesBefore[group]
            advance(to: start)
            let end = start + Int32(truncatingIfNeeded: leaves)
            // No edge inside the group (most groups of a page; one at `end` is past it): its leaves
            // are all as its first is.
            if passed == edges.count || edges[passed] >= end {
                return state.isSelected(passed: passed) ? leaves : 0
            }
            // Galloping from the cursor: a group's end is usually a few edges past its start.
            var low = passed
            var step = 1
            while low + step <= edges.count && edges[low + step - 1] <= end {
                low += step
                step &<<= 1
            }
            let endPassed = edges[low ..< min(low + step, edges.count)].upperBound(end)
            return Int(state.selected(below: end, passed: endPassed) - state.selected(below: start, passed: passed))
        }

        /// Moves the cursor to `rank`: a walk for the next few edges, a search past them.
        @inlinable mutating func advance(to rank: Int32) {
            let edges = state.edges
            if rank < lastRank || lastRank == .min {
                passed = edges.upperBound(rank)
            } else {
                var steps = 0
                while passed < edges.count && edges[passed] <= rank {
                    passed += 1
                    steps += 1
                    if steps == 8 {
                        passed = edges[passed...].upperBound(rank)
                        break
                    }
                }
            }
            lastRank = rank
        }
    }
}
