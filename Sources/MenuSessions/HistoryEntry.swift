import MenuModel

/// What one write leaves in a session's changes history, in the 12 bytes each store keeps an
/// entry in (``ChangeHistory``, the Redis record's `h` field): three 32-bit words
/// `at | inserted | removed`.
///
/// - A splice: `removed` rows at `at` replaced by `inserted` rows; `at` 0xFFFFFFFF for a write
///   that changed no visible row (a hidden group's).
/// - Rows whose content changed but not their number (a selection, ``ReconfiguredRows``):
///   `at | count | 0x80000000 + node`. A splice removes fewer than 2^31 rows (menus are indexed
///   by `Int32`), so the third word's high bit tells the two apart.
///
/// `at` 0xFFFFFFFE is each store's reload entry, never a ``HistoryEntry``.
package enum HistoryEntry: Sendable, Equatable {
    case splice(RowChange?)
    case reconfigured(ReconfiguredRows)

    static let noRow: UInt32 = .max
    /// The first word of a reload entry (its other two are 0).
    package static let reloadWord: UInt32 = .max - 1
    static let reconfiguredFlag: UInt32 = 0x8000_0000

    /// The entry's three words.
    package var words: (at: UInt32, inserted: UInt32, removed: UInt32) {
        switch self {
        case .splice(nil): (Self.noRow, 0, 0)
        case .splice(let change?):
            (
                UInt32(truncatingIfNeeded: change.at), UInt32(truncatingIfNeeded: change.inserted),
                UInt32(truncatingIfNeeded: change.removed)
            )
        case .reconfigured(let rows):
            (
                UInt32(truncatingIfNeeded: rows.at), UInt32(truncatingIfNeeded: rows.count),
                Self.reconfiguredFlag | UInt32(truncatingIfNeeded: rows.node)
            )
        }
    }

    /// The entry three words hold; nil for a reload entry (`at` 0xFFFFFFFE).
    package init?(words at: UInt32, _ inserted: UInt32, _ removed: UInt32) {
        if at == Self.reloadWord { return nil }
        if at == Self.noRow {
            self = .splice(nil)
        } else if removed & Self.reconfiguredFlag != 0 {
            self = .reconfigured(
                ReconfiguredRows(at: Int(at), count: Int(inserted), node: Int(removed & ~Self.reconfiguredFlag)))
        } else {
            self = .splice(RowChange(at: Int(at), inserted: Int(inserted), removed: Int(removed)))
        }
    }

    /// The splice, if the entry is one that changed rows.
    package var splice: RowChange? {
        if case .splice(let change) = self { change } else { nil }
    }
}

/// Rows of a session's table whose content a write changed, not their number: `count` rows from
/// `at` (the written node's row and its visible descendants; none when it is hidden) and the
/// rows of `node`'s ancestors wherever they are (their counts). `node` is a position in the menu
/// the entry was written on (0: the whole menu), so the feed names the ancestors by id.
package struct ReconfiguredRows: Sendable, Equatable {
    package var at: Int
    package var count: Int
    package var node: Menu.Node

    package init(at: Int, count: Int, node: Menu.Node) {
        self.at = at
        self.count = count
        self.node = node
    }

    /// The ids of `node`'s groups, outermost first, in `menu` (the menu the entry was written on);
    /// none for the whole menu. O(depth).
    package func ancestorIDs(in menu: Menu) -> [String] {
        node > 0 && node <= menu.nodeCount ? menu.ancestors(of: node).map(menu.id(of:)) : []
    }
}
