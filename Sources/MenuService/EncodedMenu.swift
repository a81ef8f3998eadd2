import MenuModel

/// Every row's JSON, encoded once at start-up so a page of rows is mostly memory copies.
///
/// Invariant: for node `n`, `blob[spans[n].start ..< spans[n].split]` is the row object after
/// `"index":N` up to where a group's `isExpanded` value goes, and `blob[spans[n].split ..<
/// spans[n + 1].start]` the rest, closing brace included. For a row (not a group) nothing is
/// inserted, so `spans[n].split == spans[n + 1].start` and the whole object is one copy;
/// `spans[n].split < spans[n + 1].start` exactly for groups. One span per node plus one past the
/// last, so a row's three offsets are two adjacent loads.
/// Memory: about the size of the ids, titles and attributes as JSON plus 16 bytes per node; built in O(n).
struct EncodedMenu: Sendable {
    struct Span: Sendable {
        var start: Int
        var split: Int
    }

    let blob: [UInt8]
    let spans: [Span]

    init(menu: Menu) {
        var writer = JSONWriter(capacity: menu.nodeCount * 96)
        var spans = [Span]()
        spans.reserveCapacity(menu.nodeCount + 2)
        spans.append(Span(start: 0, split: 0))  // the root: never a row
        for node in menu.nodes {
            let start = writer.count
            writer.raw(",\"id\":")
            writer.string(menu.id(of: node))
            writer.raw(",\"title\":")
            writer.string(menu.title(of: node))
            writer.raw(",\"depth\":")
            writer.integer(menu.depth(of: node))
            var split: Int?
            if menu.isGroup(node) {
                writer.raw(",\"isGroup\":true,\"isExpanded\":")
                split = writer.count
                writer.raw(",\"childCount\":")
                writer.integer(menu.childCount(of: node))
            } else {
                writer.raw(",\"isGroup\":false")
            }
            if let attributes = menu.attributes(of: node) {
                writer.raw(",\"attributes\":")
                writer.object(attributes)
            }
            writer.raw("}")
            spans.append(Span(start: start, split: split ?? writer.count))
        }
        spans.append(Span(start: writer.count, split: writer.count))
        self.blob = writer.bytes
        self.spans = spans
    }

    /// Appends the JSON array of visible rows `offset ..< offset + limit` of `view` to `writer`
    /// (`[]` when there are none). Two passes over the page: the model's inlinable walk records
    /// each row's node and sums an exact bound on their bytes; then, with room for all of it
    /// reserved once, each row is three word stores for `{"index":N` (see ``RowOpening``), one
    /// copy of the pre-encoded rest, and for groups `isExpanded` plus a second copy.
    /// O(limit) after the walk finds the first row.
    func writeRows(of view: FlattenedView, offset: Int, limit: Int, to writer: inout JSONWriter) {
        let rowCount = offset >= 0 ? max(0, min(limit, view.count - offset)) : 0
        guard rowCount > 0 else { writer.raw("[]"); return }
        withUnsafeTemporaryAllocation(of: Int.self, capacity: rowCount) { rows in
            spans.withUnsafeBufferPointer { spans in
                // First the walk: each row's node (bitwise negated unless it is an expanded
                // group) and an exact bound on the bytes they take.
                var filled = 0
                var bytes = 1  // the closing bracket
                view.forEachVisibleNode(offset: offset, limit: rowCount) { row in
                    rows[filled] = row.isExpanded ? row.node : ~row.node
                    filled &+= 1
                    bytes &+= spans[row.node &+ 1].start &- spans[row.node].start
                }
                bytes &+= filled &* (RowOpening.maxLength &+ 5)
                // Then the text, with no bookkeeping per row.
                writer.raw(atMost: bytes) { target in
                    blob.withUnsafeBytes { blob in
                        let blob = blob.baseAddress!
                        var opening = RowOpening(index: offset)
                        var out = target
                        for position in 0 ..< filled {
                            let entry = rows[position]
                            let node = entry < 0 ? ~entry : entry
                            let (head, tail, end) = (spans[node].start, spans[node].split, spans[node &+ 1].start)
                            out += opening.store(at: out)
                            opening.advance()
                            out.copyMemory(from: blob + head, byteCount: tail &- head)
                            out += tail &- head
                            guard tail < end else { continue }  // a row: one copy
                            // A group: its isExpanded goes here.
                            if entry >= 0 {
                                out.storeBytes(of: Self.trueWord.littleEndian, as: UInt32.self)
                                out += 4
                            } else {
                                out.storeBytes(of: Self.falsWord.littleEndian, as: UInt32.self)
                                out.storeBytes(of: UInt8(ascii: "e"), toByteOffset: 4, as: UInt8.self)
                                out += 5
                            }
                            out.copyMemory(from: blob + tail, byteCount: end &- tail)
                            out += end &- tail
                        }
                        out.storeBytes(of: UInt8(ascii: "]"), as: UInt8.self)
                        return out + 1 - target
                    }
                }
            }
        }
    }

    /// `true` and `fals` as little-endian words (first character in the low byte).
    static let trueWord: UInt32 = 0x6575_7274
    static let falsWord: UInt32 = 0x736C_6166
}

/// The text that opens each row object of a JSON array, `[{"index":N` for the first and
/// `,{"index":N` after it, for consecutive row indexes N. Up to eight digits are one machine word
/// counted up in place (adding one to its last byte, carries as on paper), so an opening costs
/// three stores and no formatting.
///
/// Invariant: when `index < 10^8`, `digits` holds the decimal ASCII digits of `index` in memory
/// order when stored little-endian, and `digitCount` their number (1...8); otherwise `digitCount`
/// is 0 and the number is formatted when stored.
struct RowOpening {
    /// The most bytes ``store(at:)`` writes: `,{"index":` and up to 19 digits.
    static let maxLength = 29
    private var index: Int
    private var digits: UInt64 = 0
    private var digitCount = 0
    /// The opening's first eight bytes, `[{"index` until ``advance()`` and `,{"index` after.
    private var head = Self.firstHead
    /// `[{"index`, `,{"index` and `":` as little-endian words (first character in the low byte).
    static let firstHead: UInt64 = 0x7865_646E_6922_7B5B
    static let laterHead: UInt64 = 0x7865_646E_6922_7B2C
    static let prefixTail: UInt16 = 0x3A22

    init(index: Int) {
        precondition(index >= 0)
        self.index = index
        encode()
    }

    private mutating func encode() {
        guard index < 100_000_000 else { digitCount = 0; return }
        var rest = index
        var word: UInt64 = 0
        var count = 0
        repeat {  // the last digit first, ending with the first digit in the low byte
            word = word << 8 | UInt64(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
            count += 1
        } while rest > 0
        digits = word
        digitCount = count
    }

    /// Moves to the next row: a comma before it, and the index plus one. A carry turns trailing
    /// `9`s into `0`s and adds one to the digit before them, as on paper; only an index of all
    /// `9`s (or past eight digits) is formatted again.
    @inline(__always)
    mutating func advance() {
        head = Self.laterHead
        index &+= 1
        guard digitCount > 0 else { return encode() }
        var shift = UInt64(truncatingIfNeeded: (digitCount &- 1) &* 8)
        while (digits &>> shift) & 0xFF == UInt64(UInt8(ascii: "9")) {
            digits &-= 9 &<< shift  // this 9 becomes 0, and the carry moves one digit left
            guard shift > 0 else { return encode() }  // all nines: one digit more
            shift &-= 8
        }
        digits &+= 1 &<< shift
    }

    /// Stores the opening at `target` (room for ``maxLength`` bytes) and returns its length.
    @inline(__always)
    func store(at target: UnsafeMutableRawPointer) -> Int {
        target.storeBytes(of: head.littleEndian, as: UInt64.self)
        target.storeBytes(of: Self.prefixTail.littleEndian, toByteOffset: 8, as: UInt16.self)
        if digitCount > 0 {
            target.storeBytes(of: digits.littleEndian, toByteOffset: 10, as: UInt64.self)
            return 10 &+ digitCount
        }
        var count = 0
        var rest = index
        repeat { count += 1; rest /= 10 } while rest > 0
        rest = index
        for position in stride(from: 10 + count - 1, through: 10, by: -1) {
            target.storeBytes(of: UInt8(ascii: "0") + UInt8(rest % 10), toByteOffset: position, as: UInt8.self)
            rest /= 10
        }
        return 10 + count
    }
}
