/// Which ``ExpansionMode`` is in force at a node: the nearest mark's on it or above it, else the
/// session's base (see ``ExpansionState``).
extension FlattenedView {
    /// Whether `node` is an expanded group when `mode` is in force at it.
    @inline(__always) func isExpanded(_ node: Menu.Node, mode: ExpansionMode) -> Bool {
        let flags = storage.records[node].flags
        guard flags & Menu.Storage.groupFlag != 0 else { return false }
        return mode.expands(flags: flags) != state.isFlipped(node)
    }

    /// The mode in force at `node`: its nearest mark's, on it or above it, else the base.
    func mode(at node: Menu.Node) -> ExpansionMode {
        guard let first = state.marks.first, Int(first) <= node else { return state.base }
        var current = node
        while current >= Int(first) {
            if let mode = state.mark(at: current) { return mode }
            current = Int(storage.records[current].parent)
        }
        return state.base
    }

    /// `node` and its ancestors up to the top level, nearest first, each with the mode in force at
    /// it. O(d · log k).
    func ancestry(of node: Menu.Node) -> [(node: Menu.Node, mode: ExpansionMode)] {
        var path: [(node: Menu.Node, mode: ExpansionMode)] = []
        var current = node
        while current != 0 {
            path.append((current, state.base))
            current = Int(storage.records[current].parent)
        }
        var mode = state.base
        for i in path.indices.reversed() {
            if let marked = state.mark(at: path[i].node) { mode = marked }
            path[i].mode = mode
        }
        return path
    }

    /// Writes the marks on `node`'s strict ancestors to `stack`, outermost first, as (subtree end,
    /// mode); returns how many. O(d · log k).
    @usableFromInline func enclosingMarks(of node: Menu.Node, into stack: UnsafeMutableBufferPointer<(end: Int32, mode: ExpansionMode)>) -> Int {
        var count = 0
        var current = Int(storage.records[node].parent)
        while current != 0 {
            let (index, found) = state.marks.lowerBound(of: Int32(current))
            if found {
                stack[count] = (state.markEnds[index], state.markModes[index])
                count += 1
            }
            current = Int(storage.records[current].parent)
        }
        stack[0 ..< count].reverse()
        return count
    }
}
