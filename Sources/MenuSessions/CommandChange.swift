import MenuModel

/// What a command did to the table, for the client: the change object of a command on one group
/// or node, the whole-table reset of ``SessionCommand/setAll(_:)``, or a selection's.
package enum CommandChange: Sendable, Equatable {
    case group(ExpansionChange)
    case all(ExpansionResetChange)
    case selection(SelectionChange)

    /// The splice of the table (nil when no visible row was inserted or removed).
    package var splice: RowChange? {
        switch self {
        case .group(let change): change.change
        case .all(let reset): reset.change
        case .selection: nil
        }
    }

    /// What the change leaves in the session's history: its splice, or for a selection the rows
    /// whose content it changed.
    package var historyEntry: HistoryEntry {
        guard case .selection(let change) = self else { return .splice(splice) }
        return .reconfigured(ReconfiguredRows(at: change.rows.at, count: change.rows.count, node: change.node))
    }

    /// The change of a command on one group or node; nil for a whole-tree reset.
    package var groupChange: ExpansionChange? {
        if case .group(let change) = self { change } else { nil }
    }
}
