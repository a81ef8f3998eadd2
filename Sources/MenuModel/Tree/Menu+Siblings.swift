extension Menu {
    /// Each node's place among its parent's children, from 1 (what `aria-posinset` says of its
    /// row in the whole tree), indexed by position; 0 for the root. O(n) time, one pass over the
    /// records in preorder; 4 bytes per node, held by the caller (the menu keeps none).
    public func siblingPositions() -> [Int32] {
        var positions = [Int32](repeating: 0, count: nodeCount + 1)
        // The children seen so far, per group (the root included).
        var seen = [Int32](repeating: 0, count: nodeCount + 1)
        storage.records.withUnsafeBufferPointer { records in
            for node in nodes {
                let parent = Int(records[node].parent)
                seen[parent] &+= 1
                positions[node] = seen[parent]
            }
        }
        return positions
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
