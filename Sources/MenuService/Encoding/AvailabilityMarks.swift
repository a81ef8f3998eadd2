import MenuAvailability
import MenuModel

/// What a page of rows needs to show availability (``ResolvedAvailability``) at the cost of one
/// bit test per row: a bit per node that shows an availability, and the JSON each such row gets
/// before its closing brace (before `visibleDescendantCount` for a group):
/// `,"availability":{"state":"sold_out","until":"2026-12-06T19:30:00Z","reason":"…"}`, with
/// `"computed":true` for a group whose rows all show one, and `"from":"<group id>"` for a node
/// that shows the entry of a group above it.
///
/// Layout: `marked` has a bit per node that shows an availability; `sources` a bit per node with
/// JSON of its own (an entry of its own, or computed). A source's JSON is found by its rank
/// among the sources (`ranks` counts the sources before each word, then one popcount): no hash
/// table on the page's path. A marked node that is no source shows the entry of the nearest
/// group above it, which is the first source met going up (a computed group is never under a
/// group with an entry), and takes that group's `inherited` JSON.
///
/// Invariant: bit `n` of `marked` is set exactly when node `n` shows an availability, and then
/// ``Pointers/fragment(of:)`` is its JSON. Built from one overlay revision on one menu, never
/// changed. Cost: building is O(k · depth + n/64) for k nodes with an entry or a computed one
/// (a group's subtree is one run of bits); an unmarked row costs a bit test, a marked source a
/// popcount and two loads more, an inherited one a walk up its ancestors. Memory: 2n/8 + n/16
/// bytes (n nodes), 16 bytes and the JSON (under 300 bytes with the longest reason) per source.
/// Built only when something is unavailable. A class: a page takes one reference, not six. It
/// owns its tables as allocated memory, never changed after `init`, so a page takes their
/// ``pointers`` directly instead of through five nested `withUnsafeBufferPointer` closures: on
/// the 1.1M menu a page with 1,000 marks elsewhere read 1.03, 1.07 and 1.00× one without in three
/// runs, against 1.06, 1.10 and 1.08× through the closures (docs/performance.md, Availability).
final class AvailabilityMarks: @unchecked Sendable {
    /// Where a fragment lies in `bytes`.
    struct Entry: Sendable {
        var start: UInt32
        var end: UInt32
        /// The fragment of nodes under this group that show its entry (empty for others).
        var inheritedStart: UInt32
        var inheritedEnd: UInt32
    }

    private let marked: UnsafeMutableBufferPointer<UInt64>
    private let sources: UnsafeMutableBufferPointer<UInt64>
    private let ranks: UnsafeMutableBufferPointer<UInt32>
    private let entries: UnsafeMutableBufferPointer<Entry>
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    private let menu: Menu
    /// The longest fragment: what a row can take more than without availability.
    let maxFragmentLength: Int

    /// Marks for `resolved`, or nil when nothing is unavailable (then rows cost nothing more).
    init?(_ resolved: ResolvedAvailability) {
        guard resolved.count > 0 else { return nil }
        let menu = resolved.resolvedMenu
        let words = (menu.nodeCount + 1) / 64 + 1
        var marked = [UInt64](repeating: 0, count: words)
        var sources = [UInt64](repeating: 0, count: words)
        var shown: [(node: Menu.Node, own: [UInt8], inherited: [UInt8])] = []
        resolved.forEachShown { node, availability, origin, coversSubtree in
            sources[node >> 6] |= 1 << UInt64(node & 63)
            if coversSubtree {
                Self.set(&marked, from: node, to: menu.subtreeEnd(node))
            } else {
                marked[node >> 6] |= 1 << UInt64(node & 63)
            }
            shown.append(
                (
                    node, Self.fragment(availability, origin: origin, from: nil),
                    coversSubtree ? Self.fragment(availability, origin: .own, from: menu.id(of: node)) : []
                ))
        }
        shown.sort { $0.node < $1.node }  // the order of their ranks
        var bytes: [UInt8] = []
        var entries: [Entry] = []
        entries.reserveCapacity(shown.count)
        for (_, own, inherited) in shown {
            let start = UInt32(bytes.count)
            bytes += own
            let inheritedStart = UInt32(bytes.count)
            bytes += inherited
            entries.append(
                Entry(
                    start: start, end: inheritedStart, inheritedStart: inheritedStart,
                    inheritedEnd: UInt32(bytes.count)))
        }
        var ranks = [UInt32](repeating: 0, count: words)
        var before: UInt32 = 0
        for word in 0 ..< words {
            ranks[word] = before
            before += UInt32(sources[word].nonzeroBitCount)
        }
        self.marked = Self.owned(marked)
        self.sources = Self.owned(sources)
        self.ranks = Self.owned(ranks)
        self.entries = Self.owned(entries)
        self.bytes = Self.owned(bytes)
        self.menu = menu
        maxFragmentLength = shown.reduce(0) { max($0, $1.own.count, $1.inherited.count) }
    }

    deinit {
        marked.deallocate()
        sources.deallocate()
        ranks.deallocate()
        entries.deallocate()
        bytes.deallocate()
    }

    /// A copy of `array` in memory of its own (one element at least, so it has an address).
    private static func owned<Element>(_ array: [Element]) -> UnsafeMutableBufferPointer<Element> {
        let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: max(1, array.count))
        _ = buffer.initialize(from: array)
        return buffer
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

    /// Unsafe views of the marks while one page is written: no reference counting per row.
    struct Pointers {
        let marked: UnsafePointer<UInt64>
        let sources: UnsafePointer<UInt64>
        let ranks: UnsafePointer<UInt32>
        let entries: UnsafePointer<Entry>
        let bytes: UnsafeRawPointer
        let menu: Menu

        @inline(__always) func isMarked(_ node: Int) -> Bool {
            marked[node &>> 6] & (1 &<< UInt64(node & 63)) != 0
        }

        @inline(__always) private func isSource(_ node: Int) -> Bool {
            sources[node &>> 6] & (1 &<< UInt64(node & 63)) != 0
        }

        /// The entry of source `node`: its rank among the sources.
        @inline(__always) private func entry(_ node: Int) -> Entry {
            let word = node &>> 6
            let below = sources[word] & ((1 &<< UInt64(node & 63)) &- 1)
            return entries[Int(ranks[word]) &+ below.nonzeroBitCount]
        }

        /// The JSON of marked node `node`.
        @inline(__always) func fragment(of node: Int) -> UnsafeRawBufferPointer {
            if isSource(node) {
                let entry = entry(node)
                return UnsafeRawBufferPointer(start: bytes + Int(entry.start), count: Int(entry.end &- entry.start))
            }
            var ancestor = menu.parent(of: node)
            while let group = ancestor, !isSource(group) { ancestor = menu.parent(of: group) }
            guard let group = ancestor else { return UnsafeRawBufferPointer(start: nil, count: 0) }
            let entry = entry(group)
            return UnsafeRawBufferPointer(
                start: bytes + Int(entry.inheritedStart), count: Int(entry.inheritedEnd &- entry.inheritedStart))
        }
    }

    /// ``Pointers`` to these marks, valid while the marks are alive (``withPointers(_:)`` keeps them so).
    fileprivate var pointers: Pointers {
        Pointers(
            marked: UnsafePointer(marked.baseAddress!), sources: UnsafePointer(sources.baseAddress!),
            ranks: UnsafePointer(ranks.baseAddress!), entries: UnsafePointer(entries.baseAddress!),
            bytes: UnsafeRawPointer(bytes.baseAddress!), menu: menu)
    }

    /// `body` with ``Pointers`` to these marks (valid during the call).
    func withPointers<Result>(_ body: (Pointers) -> Result) -> Result {
        withExtendedLifetime(self) { body(pointers) }
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

extension Optional where Wrapped == AvailabilityMarks {
    /// `body` with the marks' pointers, or nil without marks.
    func withPointers<Result>(_ body: (AvailabilityMarks.Pointers?) -> Result) -> Result {
        withExtendedLifetime(self) { body(self?.pointers) }
    }
}
