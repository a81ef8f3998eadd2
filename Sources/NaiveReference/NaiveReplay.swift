import MenuModel

/// What a table view does with a changes feed, written out to check the feed with: replay the
/// splices, oldest first, onto the rows it held (`old`), fill the rows they inserted from the rows
/// of now (`new`), and nothing else. Returns what is wrong with the feed (nil: nothing):
///
/// - a splice that does not fit the rows at that point;
/// - a result that is not `new` row for row (by id, title, depth, parent, kind, child count and
///   attributes; `index` is the position);
/// - a kept row whose `isExpanded` changed though it is no splice's *anchor* (the row right
///   before a splice: the group whose change it is), or whose `visibleDescendantCount` changed
///   though it is neither an anchor nor an anchor's ancestor. Those are the only rows outside a
///   splice that the contract lets change (``RowChange``: the group's own row and the counts
///   above it); a client updates them from the write's answer or by reading them again.
///
/// A common-prefix-and-suffix diff of `old` and `new` could be shorter than a splice whose edge
/// rows happen to be equal; replaying checks the splices the server sent, whatever their extent.
/// Cost: O((old + new) · splices) at worst.
package func replayProblem(_ splices: [RowChange?], onto old: [NaiveRow], reaching new: [NaiveRow]) -> String? {
    /// A row as the client holds it: one it kept (nil: a row a splice inserted, read from `new`),
    /// and whether a splice started right after it.
    struct Slot {
        var kept: NaiveRow?
        var isAnchor = false
    }
    var slots = old.map { Slot(kept: $0) }
    for (number, splice) in splices.enumerated() {
        guard let splice else { continue }
        guard splice.at >= 0, splice.inserted >= 0, splice.removed >= 0, splice.at + splice.removed <= slots.count
        else {
            return "splice \(number) \(splice) does not fit a table of \(slots.count) rows"
        }
        slots.replaceSubrange(
            splice.at ..< splice.at + splice.removed, with: repeatElement(Slot(kept: nil), count: splice.inserted))
        if splice.at > 0 { slots[splice.at - 1].isAnchor = true }
    }
    guard slots.count == new.count else { return "the replay leaves \(slots.count) rows, the table has \(new.count)" }
    let parentOfID = Dictionary(new.map { ($0.id, $0.parentID) }, uniquingKeysWith: { first, _ in first })
    var anchors: Set<String> = []
    var aboveAnchors: Set<String> = []
    for (position, slot) in slots.enumerated() where slot.isAnchor {
        anchors.insert(new[position].id)
        var parent = new[position].parentID
        while let id = parent, aboveAnchors.insert(id).inserted { parent = parentOfID[id] ?? nil }
    }
    for (position, slot) in slots.enumerated() {
        guard var kept = slot.kept else { continue }
        let now = new[position]
        kept.index = position
        if kept.isExpanded != now.isExpanded {
            guard anchors.contains(now.id) else {
                return "row \(position) \(now.id) changed its isExpanded outside every splice"
            }
            kept.isExpanded = now.isExpanded
        }
        if kept.visibleDescendantCount != now.visibleDescendantCount {
            guard anchors.contains(now.id) || aboveAnchors.contains(now.id) else {
                return "row \(position) \(now.id) changed its visibleDescendantCount though it is above no splice"
            }
            kept.visibleDescendantCount = now.visibleDescendantCount
        }
        if kept != now { return "row \(position) after the replay is \(kept), the table's is \(now)" }
    }
    return nil
}
