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

    /// Appends visible rows `offset ..< offset + limit` of `view`, comma-separated, to `writer`:
    /// per row one short copy of `,{"index":N` (the number counted up in place, not re-formatted),
    /// one copy of the pre-encoded rest, and for groups `isExpanded` plus a second copy. The
    /// model's cursor step is inlinable, so this is one loop with no call per row.
    func writeRows(of view: FlattenedView, offset: Int, limit: Int, to writer: inout JSONWriter) {
        var cursor = view.visibleNodes(from: offset, limit: limit)
        var opening = RowOpening(index: offset)
        guard let first = cursor.next() else { return }
        blob.withUnsafeBufferPointer { blob in
            start.withUnsafeBufferPointer { start in
                split.withUnsafeBufferPointer { split in
                    var row = first
                    opening.write(to: &writer, withComma: false)
                    while true {
                        let (head, tail, end) = (start[row.node], split[row.node], start[row.node + 1])
                        writer.raw(UnsafeBufferPointer(rebasing: blob[head ..< tail]))
                        if tail < end {  // a group: its isExpanded goes here
                            writer.bool(row.isExpanded)
                            writer.raw(UnsafeBufferPointer(rebasing: blob[tail ..< end]))
                        }
                        guard let next = cursor.next() else { return }
                        row = next
                        opening.increment()
                        opening.write(to: &writer, withComma: true)
                    }
                }
            }
        }
    }
}

/// The text that opens a row object, `,{"index":N`, for consecutive row indexes N: the number is
/// counted up in place (the last digit incremented, nines carried) instead of formatted per row.
///
/// Invariant: the last `length` bytes of `text` (32 bytes) are `,{"index":` followed by the
/// decimal digits of the current index without leading zeros; `length` is 11 to 30.
struct RowOpening {
    private var text: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var length = 0
    private static let prefix: StaticString = ",{\"index\":"

    init(index: Int) {
        precondition(index >= 0)
        let digits = String(index).utf8  // at most 19 bytes: a small string, nothing allocated
        withUnsafeMutableBytes(of: &text) { bytes in
            var position = bytes.count - digits.count
            for (offset, byte) in digits.enumerated() { bytes[position + offset] = byte }
            Self.prefix.withUTF8Buffer { prefix in
                position -= prefix.count
                for (offset, byte) in prefix.enumerated() { bytes[position + offset] = byte }
            }
            length = bytes.count - position
        }
    }

    /// Adds one to the index: trailing nines roll over to zeros; when every digit was a nine the
    /// number gains a leading `1` and the prefix moves one byte left.
    @inline(__always)
    mutating func increment() {
        let total = 32
        let digitsStart = total &- (length &- 10)
        let carried: Bool = withUnsafeMutableBytes(of: &text) { bytes in
            var position = total &- 1
            while position >= digitsStart {
                if bytes[position] == UInt8(ascii: "9") {
                    bytes[position] = UInt8(ascii: "0")
                    position &-= 1
                } else {
                    bytes[position] &+= 1
                    return false
                }
            }
            // All nines: shift the prefix left and put a 1 in front of the zeros.
            let prefixStart = digitsStart - 10
            for offset in prefixStart ..< digitsStart { bytes[offset - 1] = bytes[offset] }
            bytes[digitsStart - 1] = UInt8(ascii: "1")
            return true
        }
        if carried { length += 1 }
    }

    /// Appends `,{"index":N` (or `{"index":N` for the first row of a page). `mutating` only so
    /// the text is read in place rather than copied first.
    @inline(__always)
    mutating func write(to writer: inout JSONWriter, withComma: Bool) {
        let skip = withComma ? 0 : 1
        let count = length &- skip
        withUnsafeBytes(of: &text) { bytes in
            writer.raw(UnsafeRawBufferPointer(start: bytes.baseAddress! + (32 &- count), count: count))
        }
    }
}
