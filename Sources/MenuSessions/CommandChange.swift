import MenuModel

/// What a command did to the table, for the client: the change object of a command on one group
/// or node, or the whole-table reset of ``ExpansionCommand/setAll(_:)``.
package enum CommandChange: Sendable, Equatable {
    case group(ExpansionChange)
    case all(ExpansionResetChange)

    /// The splice of the table (nil when no visible row changed).
    package var splice: RowChange? {
        switch self {
        case .group(let change): change.change
        case .all(let reset): reset.change
        }
    }

    /// The change of a command on one group or node; nil for a whole-tree reset.
    package var groupChange: ExpansionChange? {
        if case .group(let change) = self { change } else { nil }
    }
}
