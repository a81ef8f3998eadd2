import MenuModel

/// A change a client asks for: flip a group, set it (idempotent), set it and every group under
/// it (idempotent), set the whole tree (idempotent), expand every collapsed group enclosing a
/// node (idempotent), or select or clear leaves (idempotent).
package enum SessionCommand: Sendable, Equatable {
    case toggle(groupID: String)
    case set(groupID: String, isExpanded: Bool)
    /// The group and every group of its subtree: one mark, whatever the subtree's size.
    case setSubtree(groupID: String, isExpanded: Bool)
    /// Every group follows `mode` (`.default`: the config's defaults, a new session's state).
    case setAll(ExpansionMode)
    case reveal(nodeID: String)
    /// Selects or clears the leaf `nodeID`, or every leaf under the group `nodeID` at any depth,
    /// leaving the leaves of `excludedIDs` (those that cannot be chosen now) cleared (idempotent).
    case select(nodeID: String, selected: Bool, excludedIDs: [String] = [])
    /// Selects or clears every leaf of the menu, leaving the leaves of `excludedIDs` cleared
    /// (idempotent).
    case selectAll(Bool, excludedIDs: [String] = [])

    /// Whether the command may replace a whole subtree or the whole state at once (a store
    /// journals the resulting state rather than single groups).
    package var isBulk: Bool {
        switch self {
        case .setSubtree, .setAll, .select, .selectAll: true
        case .toggle, .set, .reveal: false
        }
    }
}

extension SessionCommand {
    /// Whether the command may make a session's state larger: all but a whole-tree reset, which
    /// leaves a state of no entries.
    package var mayGrowState: Bool {
        if case .setAll = self { false } else { true }
    }
}

extension SessionCommand {
    /// Refuses, as running it would, a command that names no group of `menu` (or, for a reveal, no
    /// node): a conditional write checks this before its precondition, because a request that
    /// fails without its condition must fail that way, not with 412 (RFC 9110 §13.2.1). O(1).
    package func checkTarget(in menu: Menu) throws(SessionStoreError) {
        switch self {
        case .toggle(let id), .set(let id, _), .setSubtree(let id, _):
            do { _ = try menu.group(withID: id) } catch { throw .expansion(error) }
        case .reveal(let id), .select(let id, _, _):
            guard menu.node(withID: id) != nil else { throw .expansion(.unknownNode(id: id)) }
        case .setAll, .selectAll:
            break
        }
    }
}
