extension MenuBuilder {
    /// A broken structural invariant: the node where it breaks and what is wrong.
    struct StructureViolation: Error, Equatable {
        var node: Int
        var detail: String
    }

    /// Checks what ``FlattenedView`` relies on and the builder derived rather than read, so that no
    /// count is trusted unverified: every group's child list tiles its subtree in preorder (first
    /// child right after it, each next child at the previous one's subtree end, the last ending
    /// with it), so every node is in exactly one list, under its own parent, one level deeper; rows
    /// have no children; every sibling prefix and open size is the sum it claims; every node's id
    /// is indexed once. One O(n) pass over the arrays, no allocation.
    func verifyStructure() throws(StructureViolation) {
        let n = ids.count
        guard records.count == n, titles.count == n, openRows.count == n, openLeaves.count == n,
            attributeSlot.count == n
        else {
            throw StructureViolation(node: 0, detail: "per-node arrays of different lengths")
        }
        guard idIndex.count == n - 1 else {
            throw StructureViolation(node: 0, detail: "\(idIndex.count) ids indexed for \(n - 1) nodes")
        }
        guard records[0].subtreeEnd == n, records[0].depth == -1,
            records[0].flags == Menu.Storage.groupFlag | Menu.Storage.expandedFlag
        else {
            throw StructureViolation(node: 0, detail: "the root does not span the menu as an open group")
        }
        for node in 0 ..< n {
            let record = records[node]
            let end = Int(record.subtreeEnd)
            if node > 0 {
                let parent = Int(record.parent)
                guard parent >= 0, parent < node, Int(records[parent].depth) + 1 == Int(record.depth),
                    end > node, end <= Int(records[parent].subtreeEnd)
                else { throw StructureViolation(node: node, detail: "not inside its parent's subtree one level down") }
                guard attributeSlot[node] < attributes.count else {
                    throw StructureViolation(node: node, detail: "attribute slot out of range")
                }
            }
            guard record.flags & Menu.Storage.groupFlag != 0 else {
                guard record.childCount == 0, end == node + 1, openRows[node] == 1, openLeaves[node] == 1 else {
                    throw StructureViolation(node: node, detail: "a row with children or sizes")
                }
                continue
            }
            let first = Int(record.firstChildSlot)
            let count = Int(record.childCount)
            guard first >= 0, count >= 0, first + count <= children.count else {
                throw StructureViolation(node: node, detail: "child slots out of range")
            }
            var next = node + 1  // where the next child must start
            var rows: Int64 = 1
            var leaves: Int64 = 0
            for entry in children[first ..< first + count] {
                let child = Int(entry.node)
                guard child == next, records[child].parent == Int32(node),
                    Int64(entry.siblingPrefix) == rows - 1, records[child].siblingPrefix == entry.siblingPrefix
                else {
                    throw StructureViolation(node: node, detail: "child list does not tile its subtree in preorder")
                }
                let collapsedGroup = records[child].flags == Menu.Storage.groupFlag
                rows += collapsedGroup ? 1 : Int64(openRows[child])
                leaves += collapsedGroup ? 0 : Int64(openLeaves[child])
                next = Int(records[child].subtreeEnd)
            }
            guard next == end else {
                throw StructureViolation(node: node, detail: "nodes \(next) ..< \(end) are in no child list")
            }
            guard Int64(openRows[node]) == rows, Int64(openLeaves[node]) == leaves else {
                throw StructureViolation(
                    node: node,
                    detail:
                        "open sizes \(openRows[node]) rows, \(openLeaves[node]) leaves; children give \(rows), \(leaves)"
                )
            }
        }
        // Each node is in its parent's list (the tiling above); none in a second one.
        guard children.count == n - 1 else {
            throw StructureViolation(node: 0, detail: "\(children.count) child entries for \(n - 1) nodes")
        }
    }
}
