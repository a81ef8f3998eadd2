import MenuModel

extension EncodedMenu {
    /// Appends the JSON array of the rows of the groups enclosing the row at `index` of `view`,
    /// the top-level one first (`[]` for a top-level row or past the end): what a sticky header
    /// ("Drinks › Beer") shows above a page that starts inside them. Each is a visible row, since
    /// its descendant is, found by ``FlattenedView/index(ofNode:)``: O(depth · (log m + log k)).
    func writeAncestorRows(
        of view: FlattenedView, above index: Int, marks: AvailabilityMarks?, to writer: inout JSONWriter
    ) {
        var first: Menu.Node?
        view.forEachVisibleNode(offset: index, limit: 1) { first = $0.node }
        let rows = (first.map(view.ancestors(of:)) ?? []).compactMap(view.index(ofNode:))
        writeArray(of: rows, to: &writer) { row, writer in writeRow(of: view, at: row, marks: marks, to: &writer) }
    }

    /// The same for a filtered tree, where the ancestors of a row shown are shown: each found by
    /// ``FilteredView/index(ofNode:)``, O(depth · log count).
    func writeAncestorRows(
        of view: FilteredView, above index: Int, marks: AvailabilityMarks?, to writer: inout JSONWriter
    ) {
        var path: [Menu.Node] = []
        var current = index >= 0 && index < view.count ? view.node(at: index) : nil
        while let node = current, let parent = view.menu.parent(of: node) {
            path.append(parent)
            current = parent
        }
        writeArray(of: path.reversed().compactMap(view.index(ofNode:)), to: &writer) { row, writer in
            var one = JSONWriter(capacity: rowBound + (marks?.maxFragmentLength ?? 0) + 64)
            writeRows(of: view, offset: row, limit: 1, marks: marks, to: &one)
            let bytes = one.bytes  // `[{…}]`
            writer.raw(Array(bytes[1 ..< bytes.count - 1]))
        }
    }

    /// `[`, what `write` writes for each of `rows`, comma-separated, `]`.
    private func writeArray(of rows: [Int], to writer: inout JSONWriter, _ write: (Int, inout JSONWriter) -> Void) {
        writer.raw("[")
        for (position, row) in rows.enumerated() {
            if position > 0 { writer.raw(",") }
            write(row, &writer)
        }
        writer.raw("]")
    }
}
