import MenuAvailability
import MenuModel

/// What a page of rows needs to show availability (``ResolvedAvailability``) at the cost of one
/// bit test per row: a bit per node that shows an availability, and the JSON each such row gets
/// before its closing brace (before `visibleDescendantCount` for a group):
/// `,"availability":{"state":"sold_out","until":"2026-12-06T19:30:00Z","reason":"…"}`, with
/// `"computed":true` for a group whose rows all show one, and `"from":"<group id>"` for a node
/// that shows the entry of a group above it.
///
/// Invariant: bit `n` of `bits` is set exactly when node `n` shows an availability, and then
/// ``fragment(of:)`` finds its JSON. Built from one overlay revision on one menu, never changed.
/// Cost: building is O(k · depth + n/64) for k nodes with an entry or a computed one (a group's
/// subtree is one run of bits); a marked row costs a hash lookup more, and an inherited one a
/// walk up its ancestors. Memory: n/8 bytes, plus each fragment (under 300 bytes with the
/// longest reason) — built only when something is unavailable.
struct AvailabilityMarks: Sendable {
    private let bits: [UInt64]
    /// The JSON of each node that shows an availability of its own or computed.
    private let fragments: [Menu.Node: [UInt8]]
    /// For each group with an entry of its own, the JSON of the nodes under it that show it.
    private let inheritedFragments: [Menu.Node: [UInt8]]
    private let resolved: ResolvedAvailability
    /// The longest fragment: what a row can take more than without availability.
    let maxFragmentLength: Int

    /// Marks for `resolved`, or nil when nothing is unavailable (then rows cost nothing more).
    init?(_ resolved: ResolvedAvailability) {
        guard resolved.count > 0 else { return nil }
        let menu = resolved.resolvedMenu
        var bits = [UInt64](repeating: 0, count: (menu.nodeCount + 1) / 64 + 1)
        var fragments: [Menu.Node: [UInt8]] = [:]
        var inherited: [Menu.Node: [UInt8]] = [:]
        var longest = 0
        resolved.forEachShown { node, availability, origin, coversSubtree in
            let own = Self.fragment(availability, origin: origin, from: nil)
            fragments[node] = own
            longest = max(longest, own.count)
            if coversSubtree {
                let under = Self.fragment(availability, origin: .own, from: menu.id(of: node))
                inherited[node] = under
                longest = max(longest, under.count)
                Self.set(&bits, from: node, to: menu.subtreeEnd(node))
            } else {
                bits[node >> 6] |= 1 << UInt64(node & 63)
            }
        }
        self.bits = bits
        self.fragments = fragments
        inheritedFragments = inherited
        self.resolved = resolved
        maxFragmentLength = longest
    }

    /// Sets the bits of nodes `start ..< end`: whole words at once between the partial ends.
    private static func set(_ bits: inout [UInt64], from start: Int, to end: Int) {
        var node = start
        while node < end {
            if node & 63 == 0, end - node >= 64 {
                bits[node >> 6] = ~0
                node += 64
            } else {
                bits[node >> 6] |= 1 << UInt64(node & 63)
                node += 1
            }
        }
    }

    @inline(__always) func isMarked(_ node: Int) -> Bool { bits[node &>> 6] & (1 &<< UInt64(node & 63)) != 0 }

    /// The JSON node `node` gets (a marked node's; empty for an unmarked one).
    func fragment(of node: Int) -> [UInt8] {
        if let own = fragments[node] { return own }
        guard let source = resolved.source(of: node) else { return [] }
        return inheritedFragments[source] ?? []
    }

    /// `,"availability":{…}` of `availability`.
    static func fragment(_ availability: Availability, origin: ResolvedAvailability.Origin, from group: String?)
        -> [UInt8]
    {
        var writer = JSONWriter(capacity: 96)
        writer.raw(",\"availability\":{\"state\":")
        writer.string(availability.state.rawValue)
        if let until = availability.until {
            writer.raw(",\"until\":")
            writer.string(until.rfc3339)
        }
        if let reason = availability.reason {
            writer.raw(",\"reason\":")
            writer.string(reason)
        }
        if origin == .computed { writer.raw(",\"computed\":true") }
        if let group {
            writer.raw(",\"from\":")
            writer.string(group)
        }
        writer.raw("}")
        return writer.bytes
    }
}
