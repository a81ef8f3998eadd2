/// How a session decides the expansion of the groups it did not flip: as the config says, or
/// every group expanded, or every group collapsed. A session has one for the whole tree (its
/// base) and may set another for one group's subtree (a mark, see ``SessionState``).
public enum ExpansionMode: String, Sendable, CaseIterable, Hashable {
    /// Each group as the config's `expanded` says.
    case `default`
    /// Every group expanded.
    case expanded
    /// Every group collapsed.
    case collapsed

    /// Whether a group with these menu `flags` is expanded under this mode when nothing flips it.
    @inlinable @inline(__always) func expands(flags: UInt8) -> Bool {
        switch self {
        case .default: flags & Menu.Storage.expandedFlag != 0
        case .expanded: true
        case .collapsed: false
        }
    }
}

extension ExpansionMode {
    /// Whether a group expanded by default or not (`expandedByDefault`) is expanded under this mode.
    func expands(expandedByDefault: Bool) -> Bool {
        switch self {
        case .default: expandedByDefault
        case .expanded: true
        case .collapsed: false
        }
    }
}
