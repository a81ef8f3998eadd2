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

    /// Appends the row for `visible` to `writer`.
    @inline(__always) func writeRow(_ visible: VisibleNode, isGroup: Bool, to writer: inout JSONWriter) {
        writer.raw("{\"index\":")
        writer.integer(visible.index)
        let node = visible.node
        writer.raw(blob[start[node] ..< split[node]])
        if isGroup { writer.bool(visible.isExpanded) }
        writer.raw(blob[split[node] ..< start[node + 1]])
    }
}
