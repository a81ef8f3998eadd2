import HTTPCore
import MenuModel

extension EncodedMenu {
    /// Appends the JSON array of rows `offset ..< offset + limit` of `view` (`[]` when there are
    /// none), each from the node's pre-encoded bytes: `{"index":N` (its row in the filtered view),
    /// the encoded row (in this encoding's locale), and for a group `isExpanded` (true when something inside it is shown) and
    /// `visibleDescendantCount` (its shown descendants). O(limit): a few copies per row, as a page
    /// of the session's own tree, and no search for the first row.
    func writeRows(of view: FilteredView, offset: Int, limit: Int, to writer: inout JSONWriter) {
        var first = true
        writer.raw("[")
        blob.withUnsafeBytes { blob in
            view.forEachRow(offset: offset, limit: limit) { row, descendants in
                let (head, tail, end) = (spans[row.node].start, spans[row.node].split, spans[row.node + 1].start)
                writer.raw(first ? "{\"index\":" : ",{\"index\":")
                first = false
                writer.integer(row.index)
                if let titles = localeTitles {  // another locale: its title in place of the default's
                    let title = titles.defaultTitles[row.node]
                    writer.raw(UnsafeRawBufferPointer(rebasing: blob[head ..< title.start]))
                    titles.bytes.withUnsafeBytes { bytes in
                        writer.raw(
                            UnsafeRawBufferPointer(
                                rebasing: bytes[titles.offsets[row.node] ..< titles.offsets[row.node + 1]]))
                    }
                    writer.raw(UnsafeRawBufferPointer(rebasing: blob[title.split ..< tail]))
                } else {
                    writer.raw(UnsafeRawBufferPointer(rebasing: blob[head ..< tail]))
                }
                guard tail < end else { return }  // a row: one copy
                writer.bool(row.isExpanded)
                writer.raw(UnsafeRawBufferPointer(rebasing: blob[tail ..< end]))
                writer.integer(descendants)
                writer.raw("}")
            }
        }
        writer.raw("]")
    }
}
