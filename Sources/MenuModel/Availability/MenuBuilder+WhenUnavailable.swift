/// Reads a node's `whenUnavailable` (`"show"`, the default, keeps an unavailable node in the
/// listing, marked; `"hide"` leaves it out) and resolves the inheritance once the whole document
/// is read: a node without one takes its parent's.
extension MenuBuilder {
    mutating func setWhenUnavailable(_ value: JSONValue, of position: Int32) {
        switch value {
        case .string("show"): whenUnavailable[position] = false
        case .string("hide"): whenUnavailable[position] = true
        default:
            report(
                .init(
                    key: "whenUnavailable", kind: .wrongType(expected: "\"show\" or \"hide\""), value: value.excerpt()))
        }
    }

    /// One bit per node of `records`, set where the node's own `whenUnavailable`, or else its
    /// nearest ancestor's, is `hide`; empty when none is. One preorder pass (a parent comes before
    /// its children), only when some node gives the key: O(n) then, nothing otherwise.
    static func hiddenWhenUnavailable(_ given: [Int32: Bool], records: [Menu.NodeRecord]) -> [UInt64] {
        guard given.values.contains(true) else { return [] }
        var bits = [UInt64](repeating: 0, count: (records.count + 63) / 64)
        func isSet(_ node: Int) -> Bool { bits[node >> 6] & (1 << UInt64(node & 63)) != 0 }
        for node in records.indices.dropFirst() {
            let hides = given[Int32(node)] ?? isSet(Int(records[node].parent))
            if hides { bits[node >> 6] |= 1 << UInt64(node & 63) }
        }
        return bits
    }
}
