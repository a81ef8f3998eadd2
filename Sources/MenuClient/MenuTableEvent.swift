import Foundation

/// One splice of the table, as a table view applies it: in one batch update, delete
/// ``deletedIndexPaths`` (positions before it) and insert ``insertedIndexPaths`` (positions after
/// it): the exact arguments of `UITableView.deleteRows(at:with:)` / `insertRows(at:with:)`
/// inside `performBatchUpdates`; ``reconfiguredIndexPaths`` are rows before the splice whose
/// content changed (the group's disclosure state, its enclosing groups' counts), for
/// `reconfigureRows(at:)`. ``count`` is the table's row count after it.
public struct MenuTableChange: Sendable, Hashable {
    public var splice: MenuSplice
    public var count: Int
    public var revision: Int
    public var section: Int
    /// Rows before ``splice``'s `at` updated or dropped to placeholders by the change.
    public var reconfiguredRows: [Int]

    public var deletedRows: Range<Int> { splice.at ..< splice.at + splice.removed }
    public var insertedRows: Range<Int> { splice.at ..< splice.at + splice.inserted }
    public var deletedIndexPaths: [IndexPath] { deletedRows.map { IndexPath(indexes: [section, $0]) } }
    public var insertedIndexPaths: [IndexPath] { insertedRows.map { IndexPath(indexes: [section, $0]) } }
    public var reconfiguredIndexPaths: [IndexPath] { reconfiguredRows.map { IndexPath(indexes: [section, $0]) } }
}

/// Why ``MenuTable`` dropped every cached row (a table view reloads its data).
public enum MenuTableReloadReason: Sendable, Hashable {
    /// The server serves another menu (a reload there): rows and positions of the old one are void.
    case menuChanged(from: String, to: String)
    /// The changes feed no longer reaches the table's revision (`410 gone`).
    case historyGone
    /// The session was recreated (``MenuTableEvent/sessionRecreated(_:)`` came just before).
    case sessionRecreated
    /// The caller asked (``MenuTable/reload()``), or an answer did not fit the cache.
    case requested
}

/// What happened to a ``MenuTable``, in the order it happened. A write returns the events it
/// caused (its own splice and any other device's found on the way); ``MenuTable/events`` carries
/// the others (pages loaded, changes and reloads found by a background catch-up, errors of
/// background loads).
public enum MenuTableEvent: Sendable, Hashable {
    case changed(MenuTableChange)
    /// Every row is a placeholder now; `count` rows.
    case reloaded(version: String, count: Int, reason: MenuTableReloadReason)
    /// Rows fetched into the cache: placeholders in `rows` can be shown now.
    case rowsLoaded(rows: Range<Int>, section: Int)
    case sessionRecreated(MenuSessionRecreation)
    /// A background page load failed; ``MenuTable/row(at:)`` tries again on the next call.
    case loadFailed(MenuClientError)
}

/// What a write did: its events in order and the row of the node it named afterwards (nil when hidden).
public struct MenuTableUpdate: Sendable, Hashable {
    public var events: [MenuTableEvent]
    public var index: Int?

    /// The splices among ``events``, in order.
    public var changes: [MenuTableChange] {
        events.compactMap { if case .changed(let change) = $0 { change } else { nil } }
    }
}
