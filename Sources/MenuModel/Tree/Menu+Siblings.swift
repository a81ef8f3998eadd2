extension Menu {
    /// Each node's place among its parent's children, from 1 (what `aria-posinset` says of its
    /// row in the whole tree), indexed by position; 0 for the root. O(n): each group's child list
    /// read once, in order. 4 bytes per node, held by the caller (the menu keeps none).
    public func siblingPositions() -> [Int32] {
        var positions = [Int32](repeating: 0, count: nodeCount + 1)
        storage.records.withUnsafeBufferPointer { records in
            storage.children.withUnsafeBufferPointer { children in
                for group in records.indices where records[group].childCount > 0 {
                    let first = Int(records[group].firstChildSlot)
                    for place in 0 ..< Int(records[group].childCount) {
                        positions[Int(children[first + place].node)] = Int32(place + 1)
                    }
                }
            }
        }
        return positions
    }

    /// The groups enclosing `node`, from the top-level one down to its parent (empty at the top).
    /// O(depth).
    public func ancestors(of node: Node) -> [Node] {
        var path: [Node] = []
        path.reserveCapacity(depth(of: node))
        var current = node
        while let parent = parent(of: current) {
            path.append(parent)
            current = parent
        }
        return path.reversed()
    }

    /// `node`'s place among its parent's children, from 1: a binary search of the parent's child
    /// list, which is in preorder. O(log f) for f siblings.
    public func siblingPosition(of node: Node) -> Int {
        let parent = storage.records[Int(storage.records[node].parent)]
        var low = Int(parent.firstChildSlot)
        var high = low + Int(parent.childCount)
        let first = low
        while low < high {
            let middle = (low + high) / 2
            if Int(storage.children[middle].node) < node { low = middle + 1 } else { high = middle }
        }
        return low - first + 1
    }

    /// How many children `node`'s parent has (what `aria-setsize` says of its row in the whole
    /// tree): the top-level nodes for a top-level node. O(1).
    public func siblingCount(of node: Node) -> Int {
        Int(storage.records[Int(storage.records[node].parent)].childCount)
    }
}
