#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What search reads of a menu, folded once at load: every node's texts (``searchTexts(of:in:)``)
/// as ``SearchFolding`` bytes in one contiguous blob, node after node in preorder, each text
/// followed by the separator 0xFF (a byte valid UTF-8 never holds, so no match spans two texts),
/// and each node's first byte in the blob.
///
/// Invariant: `starts` has `nodeCount + 2` entries, non-decreasing; node `n`'s texts are
/// `blob[starts[n] ..< starts[n + 1]]` (the root, position 0, has none), and `starts[nodeCount + 1]`
/// is `blob.count`. `attributeNames` is every attribute key some node has.
/// Memory: the folded texts plus one separator per text (about the titles' UTF-8 size) plus 4
/// bytes per node. Cost: building is O(total text length) (folding dominates: all-ASCII texts take
/// a byte loop, others Foundation); ``matches(folded:)`` is one scan of the blob anchored on the
/// query's rarest byte (glibc's vectorised `memchr` for it, or a 16-lane check of it and the
/// second rarest when it is common: ``Anchors``; then `memcmp` of the whole query at each
/// candidate; the byte frequencies are counted at build) plus, per matching node, a search
/// of `starts` forward from the previous match's node (galloping: O(log d) for a match d nodes
/// on, so one pass over `starts` at most however many nodes match); the scan restarts at the next
/// node, so each node is reported at most once, in preorder.
public struct SearchIndex: Sendable {
    /// The separator after each text.
    static let separator: UInt8 = 0xFF

    let blob: [UInt8]
    let starts: [UInt32]
    /// How often each byte value occurs in `blob`: which byte of a query to look for first.
    let byteCounts: [Int]
    /// Every attribute key that occurs in the menu: a filter naming another is refused.
    public let attributeNames: Set<String>

    /// Folds every node's ``searchTexts(of:in:)`` of `menu`. O(total text length).
    public init(menu: Menu) {
        var blob: [UInt8] = []
        blob.reserveCapacity(menu.nodeCount * 24)
        var starts: [UInt32] = [0]
        starts.reserveCapacity(menu.nodeCount + 2)
        let searchable = menu.searchableAttributes
        for node in menu.nodes {
            starts.append(UInt32(blob.count))
            Self.forEachSearchText(of: node, in: menu, searchable: searchable) { text in
                SearchFolding.append(text, to: &blob)
                blob.append(Self.separator)
            }
            precondition(blob.count < UInt32.max, "the menu's folded texts exceed 4 GiB")
        }
        starts.append(UInt32(blob.count))
        var counts = [Int](repeating: 0, count: 256)
        for byte in blob { counts[Int(byte)] += 1 }
        byteCounts = counts
        self.blob = blob
        self.starts = starts
        attributeNames = menu.storage.attributes.reduce(into: Set<String>()) { names, attributes in
            names.formUnion(attributes.keys)
        }
    }

    /// The texts a query is matched against for `node`: its title in every locale (a title
    /// repeated in another locale is read once), and the string values of the attributes `menu`
    /// marks searchable. The one place that says what search reads. A query in traditional or in
    /// simplified Chinese finds a node whose titles carry both scripts (zh-Hant and zh-Hans).
    public static func searchTexts(of node: Menu.Node, in menu: Menu) -> [String] {
        searchTexts(of: node, in: menu, searchable: menu.searchableAttributes)
    }

    static func searchTexts(of node: Menu.Node, in menu: Menu, searchable: [String]) -> [String] {
        var texts: [String] = []
        forEachSearchText(of: node, in: menu, searchable: searchable) { texts.append($0) }
        return texts
    }

    /// Calls `body` with each of ``searchTexts(of:in:)`` in turn, allocating nothing (the build's loop).
    @inline(__always)
    static func forEachSearchText(of node: Menu.Node, in menu: Menu, searchable: [String], _ body: (String) -> Void) {
        let title = menu.title(of: node)
        body(title)
        let locales = menu.localeIndices
        if locales.count > 1 {
            for locale in locales.dropFirst() {
                let other = menu.title(of: node, locale: locale)
                // A title repeated in another locale is read once (the default's, or an earlier locale's).
                if other != title && !(1 ..< locale).contains(where: { menu.title(of: node, locale: $0) == other }) {
                    body(other)
                }
            }
        }
        if !searchable.isEmpty, let attributes = menu.attributes(of: node) {
            for name in searchable {
                if case .string(let value) = attributes[name] { body(value) }
            }
        }
    }

    /// The bytes the blob holds for the folded texts: what the index costs beside `starts`.
    public var memoryBytes: Int { blob.count + starts.count * MemoryLayout<UInt32>.stride + byteCounts.count * 8 }

    /// The nodes one of whose folded texts contains `folded` (non-empty, ``SearchFolding`` bytes),
    /// in preorder, each once.
    public func matches(folded: [UInt8]) -> [Int32] {
        guard !folded.isEmpty else { return [] }
        var found: [Int32] = []
        let anchors = Anchors(folded, byteCounts: byteCounts, blobCount: blob.count)
        guard byteCounts[Int(anchors.rarest.byte)] > 0 else { return [] }
        blob.withUnsafeBytes { blob in
            starts.withUnsafeBufferPointer { starts in
                folded.withUnsafeBytes { needle in
                    guard let base = blob.baseAddress, needle.count <= blob.count else { return }
                    let lastStart = blob.count - needle.count
                    // `from`: the first blob offset a match may start at; `nextNode`: the node
                    // holding it (starts[nextNode] == from after a match).
                    var from = 0
                    var nextNode = 1
                    while from <= lastStart, let start = anchors.nextCandidate(in: base, from: from, through: lastStart)
                    {
                        guard memcmp(base + start, needle.baseAddress!, needle.count) == 0 else {
                            from = start + 1
                            continue
                        }
                        let node = Self.node(containing: start, from: nextNode, starts: starts)
                        found.append(Int32(node))
                        nextNode = node + 1
                        from = Int(starts[nextNode])
                    }
                }
            }
        }
        return found
    }

    /// Which bytes of a query a scan looks for before comparing the whole query: its rarest byte
    /// in the blob and, when that byte is common (at least one blob byte in 64, such as a digit
    /// in `Dish 740742`), also its second rarest at another offset, checked together 16 start
    /// positions at a time. One call to `memchr` per occurrence of a common byte costs more than
    /// a vector pass over the blob (4.3 ms against about 1.5 ms for that query on 1.1M nodes).
    struct Anchors {
        /// A byte of the query and its offset in it.
        typealias Anchor = (offset: Int, byte: UInt8)
        let rarest: Anchor
        /// Set when the pair is checked (a query of two or more bytes whose rarest byte is common).
        let second: Anchor?

        init(_ folded: [UInt8], byteCounts: [Int], blobCount: Int) {
            let order = folded.indices.sorted { byteCounts[Int(folded[$0])] < byteCounts[Int(folded[$1])] }
            rarest = (order[0], folded[order[0]])
            second =
                order.count > 1 && byteCounts[Int(rarest.byte)] * 64 >= blobCount ? (order[1], folded[order[1]]) : nil
        }

        /// The first start in `from ... last` whose anchor bytes agree with the query, nil when none.
        /// `base` holds at least `last` + the query's length bytes.
        @inline(__always)
        func nextCandidate(in base: UnsafeRawPointer, from: Int, through last: Int) -> Int? {
            guard let second else {
                guard let hit = memchr(base + from + rarest.offset, Int32(rarest.byte), last - from + 1) else {
                    return nil
                }
                return UnsafeRawPointer(hit) - base - rarest.offset
            }
            let (firstBytes, secondBytes) = (
                SIMD16<UInt8>(repeating: rarest.byte), SIMD16<UInt8>(repeating: second.byte)
            )
            var start = from
            while start + 15 <= last {
                let atFirst = (base + start + rarest.offset).loadUnaligned(as: SIMD16<UInt8>.self)
                let atSecond = (base + start + second.offset).loadUnaligned(as: SIMD16<UInt8>.self)
                let both = (atFirst .== firstBytes) .& (atSecond .== secondBytes)
                if any(both) {
                    for lane in 0 ..< 16 where both[lane] { return start + lane }
                }
                start += 16
            }
            while start <= last {
                if base.load(fromByteOffset: start + rarest.offset, as: UInt8.self) == rarest.byte
                    && base.load(fromByteOffset: start + second.offset, as: UInt8.self) == second.byte
                {
                    return start
                }
                start += 1
            }
            return nil
        }
    }

    /// The node whose texts hold blob offset `offset`: the last node with `starts[node] <= offset`
    /// (every node has a title, so the starts of nodes rise strictly), searched for from node
    /// `first` on (`starts[first] <= offset`): doubling steps until one passes `offset`, then a
    /// binary search of the last step. O(log d) for the answer d nodes after `first`.
    static func node(containing offset: Int, from first: Int, starts: UnsafeBufferPointer<UInt32>) -> Int {
        let last = starts.count - 1  // starts[last] == blob.count > offset always
        var low = first
        var step = 1
        var high = min(first + step, last)
        while Int(starts[high]) <= offset {
            low = high
            step &*= 2
            high = min(low + step, last)
        }
        while high - low > 1 {
            let middle = (low + high) / 2
            if Int(starts[middle]) <= offset { low = middle } else { high = middle }
        }
        return low
    }
}
