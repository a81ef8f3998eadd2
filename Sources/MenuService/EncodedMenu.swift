import MenuModel

/// Every row's JSON, encoded once at start-up so a page of rows is mostly memory copies.
///
/// Invariant: for node `n`, `blob[start[n] ..< split[n]]` is the row object after `"index":N`
/// up to where a group's `isExpanded` value goes, and `blob[split[n] ..< start[n + 1]]` the rest,
/// closing brace included. For a row (not a group) nothing is inserted, so `split[n] == start[n + 1]`
/// and the whole object is one copy; `split[n] < start[n + 1]` exactly for groups.
/// Memory: about the size of the ids, titles and attributes as JSON; built in O(n).
struct EncodedMenu: Sendable {
    let blob: [UInt8]
    let start: [Int]
    let split: [Int]

    init(menu: Menu) {
        var writer = JSONWriter(capacity: menu.nodeCount * 96)
        var start = [Int]()
        var split = [Int]()
        start.reserveCapacity(menu.nodeCount + 2)
        split.reserveCapacity(menu.nodeCount + 1)
        start.append(0)  // the root: never a row
        split.append(0)
        for node in menu.nodes {
            start.append(writer.count)
            writer.raw(",\"id\":")
            writer.string(menu.id(of: node))
            writer.raw(",\"title\":")
            writer.string(menu.title(of: node))
            writer.raw(",\"depth\":")
            writer.integer(menu.depth(of: node))
            if menu.isGroup(node) {
                writer.raw(",\"isGroup\":true,\"isExpanded\":")
                split.append(writer.count)
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
            if !menu.isGroup(node) { split.append(writer.count) }
        }
        start.append(writer.count)
        self.blob = writer.bytes
        self.start = start
        self.split = split
    }

    /// Appends visible rows `offset ..< offset + limit` of `view`, comma-separated, to `writer`.
    /// Per row: three word stores for `,{"index":N` (see ``RowOpening``), one copy of the
    /// pre-encoded rest, and for groups `isExpanded` plus a second copy. The model's cursor step
    /// is inlinable, so this is one loop with no call per row but the copies.
    func writeRows(of view: FlattenedView, offset: Int, limit: Int, to writer: inout JSONWriter) {
        var cursor = view.visibleNodes(from: offset, limit: limit)
        guard let first = cursor.next() else { return }
        var opening = RowOpening(index: offset)
        blob.withUnsafeBytes { blob in
            start.withUnsafeBufferPointer { start in
                split.withUnsafeBufferPointer { split in
                    let blob = blob.baseAddress!
                    /// Stores `row`'s object after its opening at `target`; returns its length.
                    @inline(__always)
                    func store(_ row: VisibleNode, at target: UnsafeMutableRawPointer) -> Int {
                        let (head, tail, end) = (start[row.node], split[row.node], start[row.node &+ 1])
                        target.copyMemory(from: blob + head, byteCount: tail &- head)
                        guard tail < end else { return tail &- head }  // a row: one copy
                        var length = tail &- head  // a group: its isExpanded goes here
                        if row.isExpanded {
                            target.storeBytes(of: Self.trueWord.littleEndian, toByteOffset: length, as: UInt32.self)
                            length &+= 4
                        } else {
                            target.storeBytes(of: Self.falsWord.littleEndian, toByteOffset: length, as: UInt32.self)
                            target.storeBytes(of: UInt8(ascii: "e"), toByteOffset: length &+ 4, as: UInt8.self)
                            length &+= 5
                        }
                        (target + length).copyMemory(from: blob + tail, byteCount: end &- tail)
                        return length &+ (end &- tail)
                    }
                    @inline(__always)
                    func maxLength(of row: VisibleNode) -> Int { start[row.node &+ 1] &- start[row.node] &+ 5 }

                    writer.raw("{\"index\":")
                    writer.integer(offset)
                    writer.raw(atMost: maxLength(of: first)) { store(first, at: $0) }
                    while let row = cursor.next() {
                        opening.increment()
                        writer.raw(atMost: RowOpening.maxLength &+ maxLength(of: row)) { target in
                            let length = opening.store(at: target)
                            return length &+ store(row, at: target + length)
                        }
                    }
                }
            }
        }
    }

    /// `true` and `fals` as little-endian words (first character in the low byte).
    static let trueWord: UInt32 = 0x6575_7274
    static let falsWord: UInt32 = 0x736C_6166
}

/// The text that opens a row object, `,{"index":N`, for consecutive row indexes N. Up to eight
/// digits are one machine word counted up by adding one to its last byte (a carry past `9`
/// re-encodes the word), so an opening costs three stores and no formatting.
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
    /// `,{"index` and `":` as little-endian words (first character in the low byte).
    static let prefixHead: UInt64 = 0x7865_646E_6922_7B2C
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

    /// Adds one to the index.
    @inline(__always)
    mutating func increment() {
        index &+= 1
        let lastDigitShift = UInt64(truncatingIfNeeded: (digitCount &- 1) &* 8)
        if digitCount > 0, (digits &>> lastDigitShift) & 0xFF != UInt64(UInt8(ascii: "9")) {
            digits &+= 1 &<< lastDigitShift
        } else {
            encode()  // a carry, 1 in 10 increments, or past 8 digits
        }
    }

    /// Stores `,{"index":N` at `target` (room for ``maxLength`` bytes) and returns its length.
    @inline(__always)
    func store(at target: UnsafeMutableRawPointer) -> Int {
        target.storeBytes(of: Self.prefixHead.littleEndian, as: UInt64.self)
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
