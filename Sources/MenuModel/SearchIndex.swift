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
/// query's rarest byte (glibc's vectorised `memchr` for it, then `memcmp` of the whole query at
/// each occurrence; the byte frequencies are counted at build) plus, per matching node, a binary
/// search of `starts` (O(log n)); the scan restarts at the next node, so each node is reported at
/// most once, in preorder.
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
                if other != title && !(1 ..< locale).contains(where: { menu.title(of: node, locale: $0) == other }) { body(other) }
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
        // The query's rarest byte in the blob, and where it sits in the query.
        let anchor = folded.indices.min { byteCounts[Int(folded[$0])] < byteCounts[Int(folded[$1])] }!
        guard byteCounts[Int(folded[anchor])] > 0 else { return [] }
        let anchorByte = Int32(folded[anchor])
        blob.withUnsafeBytes { blob in
            starts.withUnsafeBufferPointer { starts in
                folded.withUnsafeBytes { needle in
                    guard let base = blob.baseAddress else { return }
                    // `from`: the first blob offset a match may start at.
                    var from = 0
                    while from + needle.count <= blob.count {
                        let searchFrom = from + anchor
                        let searchLength = blob.count - needle.count + anchor + 1 - searchFrom
                        guard let hit = memchr(base + searchFrom, anchorByte, searchLength) else { return }
                        let start = UnsafeRawPointer(hit) - base - anchor
                        guard memcmp(base + start, needle.baseAddress!, needle.count) == 0 else {
                            from = start + 1
                            continue
                        }
                        let node = Self.node(containing: start, starts: starts)
                        found.append(Int32(node))
                        from = Int(starts[node + 1])
                    }
                }
            }
        }
        return found
    }

    /// The node whose texts hold blob offset `offset`: the last node with `starts[node] <= offset`
    /// (every node has a title, so the starts of nodes rise strictly). O(log n).
    private static func node(containing offset: Int, starts: UnsafeBufferPointer<UInt32>) -> Int {
        var low = 1
        var high = starts.count - 1  // starts[high] > offset always (offset < blob.count)
        while high - low > 1 {
            let middle = (low + high) / 2
            if Int(starts[middle]) <= offset { low = middle } else { high = middle }
        }
        return low
    }
}
