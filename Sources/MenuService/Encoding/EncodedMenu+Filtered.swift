import HTTPCore
import MenuModel

extension EncodedMenu {
    /// Appends the JSON array of rows `offset ..< offset + limit` of `view` (`[]` when there are
    /// none), each from the node's pre-encoded bytes: `{"index":N` (its row in the filtered view),
    /// its place among the rows shown (`level`, `posInSet`, `setSize`), the encoded row after its
    /// place in the whole tree (in this encoding's locale), and for a group `isExpanded` (true when something inside it is shown) and
    /// `visibleDescendantCount` (its shown descendants). O(limit): a few copies per row, as a page
    /// of the session's own tree, and no search for the first row. With `marks`, as
    /// ``writeRows(of:offset:limit:marks:to:)`` of a session's tree.
    func writeRows(
        of view: FilteredView, offset: Int, limit: Int, marks: AvailabilityMarks?, selection: RowSelection,
        to writer: inout JSONWriter
    ) {
        var first = true
        var selection = selection
        writer.raw("[")
        marks.withPointers { marks in
            blob.withUnsafeBytes { blob in
                view.forEachRow(offset: offset, limit: limit) { row, descendants in
                    let (start, tail, end) = (spans[row.node].start, spans[row.node].split, spans[row.node + 1].start)
                    let fragment =
                        marks.map {
                            $0.isMarked(row.node)
                                ? $0.fragment(of: row.node) : UnsafeRawBufferPointer(start: nil, count: 0)
                        }
                        ?? UnsafeRawBufferPointer(start: nil, count: 0)
                    // A row (not a group) is copied without its closing brace, written after its fields.
                    let copied = tail == end ? tail - 1 : tail
                    writer.raw(first ? "{\"index\":" : ",{\"index\":")
                    first = false
                    writer.integer(row.index)
                    // Its place among the rows shown, in place of its place in the whole tree.
                    EncodedMenu.writePlacement(
                        level: view.menu.depth(of: row.node) + 1, positionInSet: view.positionInSet(at: row.index),
                        setSize: view.setSize(at: row.index), to: &writer)
                    let head = start + EncodedMenu.placementLength(at: start, in: blob)
                    if let titles = localeTitles {  // another locale: its title in place of the default's
                        let title = titles.defaultTitles[row.node]
                        writer.raw(UnsafeRawBufferPointer(rebasing: blob[head ..< title.start]))
                        titles.bytes.withUnsafeBytes { bytes in
                            writer.raw(
                                UnsafeRawBufferPointer(
                                    rebasing: bytes[titles.offsets[row.node] ..< titles.offsets[row.node + 1]]))
                        }
                        writer.raw(UnsafeRawBufferPointer(rebasing: blob[title.split ..< copied]))
                    } else {
                        writer.raw(UnsafeRawBufferPointer(rebasing: blob[head ..< copied]))
                    }
                    guard tail < end else {  // a row: one copy
                        if !fragment.isEmpty { writer.raw(fragment) }
                        selection.write(row.node, isGroup: false, to: &writer)
                        writer.raw("}")
                        return
                    }
                    writer.bool(row.isExpanded)
                    let key = end - EncodedMenu.descendantCountKeyLength
                    writer.raw(UnsafeRawBufferPointer(rebasing: blob[tail ..< key]))
                    writer.raw(fragment)
                    selection.write(row.node, isGroup: true, to: &writer)
                    writer.raw(UnsafeRawBufferPointer(rebasing: blob[key ..< end]))
                    writer.integer(descendants)
                    writer.raw("}")
                }
            }
        }
        writer.raw("]")
    }
}
