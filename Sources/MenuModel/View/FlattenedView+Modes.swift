/// Which ``ExpansionMode`` is in force at a node: the nearest mark's on it or above it, else the
/// session's base (see ``SessionState``).
extension FlattenedView {
    /// Whether `node` is an expanded group when `mode` is in force at it.
    @inline(__always) func isExpanded(_ node: Menu.Node, mode: ExpansionMode) -> Bool {
        let flags = storage.records[node].flags
        guard flags & Menu.Storage.groupFlag != 0 else { return false }
        return mode.expands(flags: flags) != state.isFlipped(node)
    }

    /// The mode in force at `node`: its nearest mark's, on it or above it, else the base.
    func mode(at node: Menu.Node) -> ExpansionMode {
        guard let first = state.marks.first?.node, Int(first) <= node else { return state.base }
        var current = node
        while current >= Int(first) {
            if let mode = state.mark(at: current) { return mode }
            current = Int(storage.records[current].parent)
        }
        return state.base
    }

    /// A node on an ancestor path, with the mode in force at it.
    typealias PathStep = (node: Menu.Node, mode: ExpansionMode)

    /// Writes `node` and its ancestors up to the top level to `buffer` (at least ``Menu/height``
    /// long), nearest first, each with the mode in force at it, and returns that part of the
    /// buffer. O(d · log k); the caller lends a buffer on its stack frame, so a toggle allocates
    /// no path.
    func fillAncestry(of node: Menu.Node, into buffer: UnsafeMutableBufferPointer<PathStep>)
        -> UnsafeMutableBufferPointer<PathStep>
    {
        var count = 0
        var current = node
        while current != 0 {
            buffer[count] = (current, state.base)
            count += 1
            current = Int(storage.records[current].parent)
        }
        if !state.marks.isEmpty {
            var mode = state.base
            for i in (0 ..< count).reversed() {
                if let marked = state.mark(at: buffer[i].node) { mode = marked }
                buffer[i].mode = mode
            }
        }
        return UnsafeMutableBufferPointer(rebasing: buffer[0 ..< count])
    }

    /// Calls `body` with ``fillAncestry(of:into:)``'s path of `node` in a buffer on the stack.
    func withAncestry<Result>(of node: Menu.Node, _ body: (UnsafeMutableBufferPointer<PathStep>) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: PathStep.self, capacity: max(menu.height, 1)) {
            body(fillAncestry(of: node, into: $0))
        }
    }

    /// Writes the marks on `node`'s strict ancestors to `stack`, outermost first, as (subtree end,
    /// mode); returns how many. O(d · log k).
    @usableFromInline func enclosingMarks(
        of node: Menu.Node, into stack: UnsafeMutableBufferPointer<(end: Int32, mode: ExpansionMode)>
    ) -> Int {
        var count = 0
        var current = Int(storage.records[node].parent)
        while current != 0 {
            let (index, found) = state.marks.lowerBound(mark: Int32(current))
            if found {
                stack[count] = (state.marks[index].end, state.marks[index].mode)
                count += 1
            }
            current = Int(storage.records[current].parent)
        }
        stack[0 ..< count].reverse()
        return count
    }
}
