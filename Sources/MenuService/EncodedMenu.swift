import MenuModel

/// Every row's JSON, encoded once at start-up so a page of rows is mostly memory copies.
///
/// Invariant: for node `n`, `blob[start[n] ..< split[n]]` is the row object after `"index":N`
/// up to where a group's `isExpanded` value goes, and `blob[split[n] ..< start[n + 1]]` the rest,
/// closing brace included. Rows have nothing to insert at `split`.
/// Memory: about the size of the ids, titles and attributes as JSON; built in O(n).
struct EncodedMenu: Sendable {
    let blob: [UInt8]
    let start: [Int]
    let split: [Int]

    init(menu: Menu) {
        var writer = JSONWriter(capacity: menu.nodeCount * 96)
        var start = [Int]()
        var split = [Int]()
        start.reserveCapacity(menu.nodeCount + 2)
        split.reserveCapacity(menu.nodeCount + 1)
        start.append(0)  // the root: never a row
        split.append(0)
        for node in menu.nodes {
            start.append(writer.bytes.count)
            writer.raw(",\"id\":")
            writer.string(menu.id(of: node))
            writer.raw(",\"title\":")
            writer.string(menu.title(of: node))
            writer.raw(",\"depth\":")
            writer.integer(menu.depth(of: node))
            if menu.isGroup(node) {
                writer.raw(",\"isGroup\":true,\"isExpanded\":")
                split.append(writer.bytes.count)
                writer.raw(",\"childCount\":")
                writer.integer(menu.childCount(of: node))
            } else {
                writer.raw(",\"isGroup\":false")
                split.append(writer.bytes.count)
            }
            if let attributes = menu.attributes(of: node) {
                writer.raw(",\"attributes\":")
                writer.object(attributes)
            }
            writer.raw("}")
        }
        start.append(writer.bytes.count)
        self.blob = writer.bytes
        self.start = start
        self.split = split
    }

    /// Appends visible rows `offset ..< offset + limit` of `view`, comma-separated, to `writer`:
    /// memory copies of the pre-encoded parts plus each row's index and, for groups, `isExpanded`.
    func writeRows(of view: FlattenedView, offset: Int, limit: Int, to writer: inout JSONWriter) {
        let menu = view.menu
        blob.withUnsafeBufferPointer { blob in
            var first = true
            view.forEachVisibleNode(offset: offset, limit: limit) { row in
                writer.raw(first ? "{\"index\":" : ",{\"index\":")
                first = false
                writer.integer(row.index)
                let node = row.node
                writer.raw(UnsafeBufferPointer(rebasing: blob[start[node] ..< split[node]]))
                if menu.isGroup(node) { writer.bool(row.isExpanded) }
                writer.raw(UnsafeBufferPointer(rebasing: blob[split[node] ..< start[node + 1]]))
            }
        }
    }
}
