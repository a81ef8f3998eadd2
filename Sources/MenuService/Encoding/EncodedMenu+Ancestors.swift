import MenuModel

extension EncodedMenu {
    /// Appends the JSON array of the rows of the groups enclosing the row at `index` of `view`,
    /// the top-level one first (`[]` for a top-level row or past the end): what a sticky header
    /// ("Drinks › Beer") shows above a page that starts inside them. Each is a visible row, since
    /// its descendant is, found by ``FlattenedView/index(ofNode:)``: O(depth · (log m + log k)).
    func writeAncestorRows(
        of view: FlattenedView, above index: Int, marks: AvailabilityMarks?, selection: RowSelection,
        to writer: inout JSONWriter
    ) {
        var first: Menu.Node?
        view.forEachVisibleNode(offset: index, limit: 1) { first = $0.node }
        let rows = (first.map(view.ancestors(of:)) ?? []).compactMap(view.index(ofNode:))
        writeArray(of: rows, to: &writer) { row, writer in
            writeRow(of: view, at: row, marks: marks, selection: selection, to: &writer)
        }
    }

    /// The same for a filtered tree, where the ancestors of a row shown are shown: each found by
    /// ``FilteredView/index(ofNode:)``, O(depth · log count).
    func writeAncestorRows(
        of view: FilteredView, above index: Int, marks: AvailabilityMarks?, selection: RowSelection,
        to writer: inout JSONWriter
    ) {
        let path = index >= 0 && index < view.count ? view.menu.ancestors(of: view.node(at: index)) : []
        writeArray(of: path.compactMap(view.index(ofNode:)), to: &writer) { row, writer in
            writeRow(marks: marks, to: &writer) {
                writeRows(of: view, offset: row, limit: 1, marks: marks, selection: selection, to: &$0)
            }
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
