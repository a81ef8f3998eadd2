import MenuModel

/// The selection fields of a page's rows (issue 28 §1), for one session on one menu: a leaf's
/// `,"selected":true|false`; a group's `,"selection":"none"|"some"|"all","selectedCount":N,
/// "selectableCount":M`, exact for subtrees never expanded. `selectableCount` is the group's
/// leaves less the unavailable ones; `selection` is `none` with nothing selected, `all` when at
/// least as many are selected as can be, `some` otherwise.
///
/// Cost per row: a few stores for a session that selected nothing; otherwise, rows asked in
/// page order, O(1) amortized for a leaf and one binary search for a group
/// (``SelectionState/RowReader``); one hash lookup more for a group while anything is
/// unavailable. A value whose cursor moves as the rows are written (pass it `inout`). Memory:
/// nothing of its own (it borrows the state and the counts).
struct RowSelection {
    private var reader: SelectionState.RowReader
    /// ``SelectionState/RowReader/selectsNothing``, asked once: per row it was a call into
    /// another module (1.2% of `menu-bench --selection`'s samples, more than the reads it spares).
    private let selectsNothing: Bool
    let menu: Menu
    /// Unavailable leaves under each group that has any (``ServedAvailability/unavailableLeaves``).
    let unavailableLeaves: [Menu.Node: Int]

    init(_ selection: SelectionState, in menu: Menu, unavailableLeaves: [Menu.Node: Int]) {
        reader = SelectionState.RowReader(selection, in: menu)
        selectsNothing = reader.selectsNothing
        self.menu = menu
        self.unavailableLeaves = unavailableLeaves
    }

    /// The fields of a session that selected nothing, with everything available.
    init(nothingSelectedIn menu: Menu) {
        self.init(SelectionState(), in: menu, unavailableLeaves: [:])
    }

    /// The most bytes ``store(_:isGroup:at:)`` writes: a group's three keys and two ten-digit counts.
    static let maxLength = 80

    /// Stores `node`'s fields at `target` (room for ``maxLength`` bytes); returns their length.
    @inline(__always)
    mutating func store(_ node: Int, isGroup: Bool, at target: UnsafeMutableRawPointer) -> Int {
        guard isGroup else {
            if !selectsNothing && reader.isSelected(node) {
                return Self.store(",\"selected\":true", at: target)
            }
            return Self.store(",\"selected\":false", at: target)
        }
        let leaves = menu.leafCount(of: node)
        let selectable = unavailableLeaves.isEmpty ? leaves : leaves - (unavailableLeaves[node] ?? 0)
        let selected = selectsNothing ? 0 : reader.selectedCount(in: node, leaves: leaves)
        var out = target
        out +=
            selected == 0
            ? Self.store(",\"selection\":\"none\",\"selectedCount\":", at: out)
            : selected >= selectable
                ? Self.store(",\"selection\":\"all\",\"selectedCount\":", at: out)
                : Self.store(",\"selection\":\"some\",\"selectedCount\":", at: out)
        out += EncodedMenu.storeDecimal(selected, at: out)
        out += Self.store(",\"selectableCount\":", at: out)
        out += EncodedMenu.storeDecimal(selectable, at: out)
        return out - target
    }

    /// `node`'s fields appended to `writer`.
    mutating func write(_ node: Int, isGroup: Bool, to writer: inout JSONWriter) {
        writer.raw(atMost: Self.maxLength) { store(node, isGroup: isGroup, at: $0) }
    }

    @inline(__always)
    private static func store(_ text: StaticString, at target: UnsafeMutableRawPointer) -> Int {
        target.copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
        return text.utf8CodeUnitCount
    }
}
