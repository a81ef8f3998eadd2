/// How many of a group's leaves a selection may hold: at least ``min`` (listed as a violation
/// while it is not met), at most ``max`` (a write past it is refused).
public struct SelectionRule: Sendable, Hashable {
    public var min: Int?
    public var max: Int?

    public init(min: Int? = nil, max: Int? = nil) {
        self.min = min
        self.max = max
    }
}

/// Reads a group's `minSelect` and `maxSelect`, reporting each problem at its key with the
/// node's id: a value that is not a whole number from 0 (1 for `maxSelect`) to the node limit, a
/// rule on a row, a minimum above the maximum or above the group's leaves.
extension MenuBuilder {
    mutating func setSelectionBound(_ key: String, _ value: JSONValue, of position: Int32) {
        let lowest = key == "maxSelect" ? 1 : 0
        guard case .integer(let integer) = value, integer >= lowest, integer <= maxNodes else {
            report(
                .init(
                    key: key, kind: .wrongType(expected: "a whole number from \(lowest) to \(maxNodes)"),
                    value: value.excerpt()))
            return
        }
        let bound = Int(integer)
        if key == "minSelect" {
            selectionRules[position, default: SelectionRule()].min = bound
        } else {
            selectionRules[position, default: SelectionRule()].max = bound
        }
    }

    /// Checks the rule of the node ending now (its subtree is complete); drops it when it is wrong.
    mutating func checkSelectionRule(of position: Int32, isGroup: Bool) {
        guard let rule = selectionRules[position] else { return }
        let shown = rule.min.map(String.init) ?? rule.max.map(String.init) ?? ""
        guard isGroup else {
            report(.init(key: rule.min != nil ? "minSelect" : "maxSelect", kind: .selectionRuleOnRow, value: shown))
            selectionRules[position] = nil
            return
        }
        guard let min = rule.min else { return }
        if let max = rule.max, min > max {
            report(.init(key: "minSelect", kind: .selectionRuleConflict(maxSelect: max), value: String(min)))
            selectionRules[position] = nil
            return
        }
        let leaves = records[Int(position) + 1 ..< ids.count].count { $0.flags & Menu.Storage.groupFlag == 0 }
        if min > leaves {
            report(.init(key: "minSelect", kind: .minSelectAboveLeaves(leaves: leaves), value: String(min)))
            selectionRules[position] = nil
        }
    }
}
