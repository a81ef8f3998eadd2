import HTTPCore
import MenuModel

/// Every row's JSON, encoded once at start-up so a page of rows is mostly memory copies.
///
/// Invariant: for node `n`, `blob[spans[n].start ..< spans[n].split]` is the row object after
/// `"index":N` (its `parentId` included, encoded once per node) up to where a group's
/// `isExpanded` value goes, and `blob[spans[n].split ..< spans[n + 1].start]` the rest: for a row
/// up to its closing brace, for a group up to where its `visibleDescendantCount` digits and the
/// closing brace go (the key last, so a group's dynamic values cost no third copy). Each node's
/// bytes open with its place in the whole tree, `,"level":L,"posInSet":P,"setSize":S`
/// (``placementLength(at:in:)``), which a filtered view's rows replace with their own. For a row (not a group) nothing is
/// inserted, so `spans[n].split == spans[n + 1].start` and the whole object is one copy;
/// `spans[n].split < spans[n + 1].start` exactly for groups. One span per node plus one past the
/// last, so a row's three offsets are two adjacent loads.
///
/// Locales (``ServedMenu`` holds one per locale): `blob` has the default locale's titles. The
/// encoding of another locale shares `blob` and `spans` (the same arrays, not copies) and adds
/// ``LocaleTitles``: its titles' JSON strings, written in place of the default title, whose
/// place in `blob` the default's encoding records per node when the menu has locales.
/// Memory: about the size of the ids, titles and attributes as JSON plus 16 bytes per node, and
/// for a menu with locales 16 bytes more per node; each further locale its titles' JSON plus 8
/// bytes per node. Built in O(n).
struct EncodedMenu: Sendable {
    struct Span: Sendable {
        var start: Int
        var split: Int
    }

    /// One locale's titles, for an encoding after the default's.
    ///
    /// Invariant: node `n`'s title is `bytes[offsets[n] ..< offsets[n + 1]]` (a JSON string),
    /// written where `blob[defaultTitles[n].start ..< defaultTitles[n].split]` has the default's.
    struct LocaleTitles: Sendable {
        let defaultTitles: [Span]
        let bytes: ResponseBody
        let offsets: [Int]
    }

    /// The rows' bytes, kept in the block they were written into (not copied into an array:
    /// on the 1.1M-node menu that copy was about 110 MB more at start-up and on each reload).
    let blob: ResponseBody
    let spans: [Span]
    /// Where each node's title is in `blob` (start, end); empty for a menu without locales.
    let titleSpans: [Span]
    /// nil for the default locale's rows (`blob` as it is).
    let localeTitles: LocaleTitles?
    /// The most bytes one row takes, its opening, `isExpanded` value and selection fields included: what a page
    /// of n rows can take at most is n times this, plus the closing bracket.
    let rowBound: Int

    /// The rows in the menu's default locale.
    init(menu: Menu) {
        var writer = JSONWriter(capacity: menu.nodeCount * 96)
        var spans = [Span]()
        spans.reserveCapacity(menu.nodeCount + 2)
        spans.append(Span(start: 0, split: 0))  // the root: never a row
        let recordsTitles = menu.localeIndices.count > 1
        var titleSpans = [Span]()
        if recordsTitles {
            titleSpans.reserveCapacity(menu.nodeCount + 1)
            titleSpans.append(Span(start: 0, split: 0))
        }
        let places = menu.siblingPositions()
        for node in menu.nodes {
            let start = writer.count
            Self.writePlacement(
                level: menu.depth(of: node) + 1, positionInSet: Int(places[node]),
                setSize: menu.siblingCount(of: node), to: &writer)
            writer.raw(",\"id\":")
            writer.string(menu.id(of: node))
            writer.raw(",\"title\":")
            let titleStart = writer.count
            writer.string(menu.title(of: node))
            if recordsTitles { titleSpans.append(Span(start: titleStart, split: writer.count)) }
            writer.raw(",\"depth\":")
            writer.integer(menu.depth(of: node))
            writer.raw(",\"parentId\":")
            if let parent = menu.parent(of: node) { writer.string(menu.id(of: parent)) } else { writer.raw("null") }
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
            writer.raw(split == nil ? "}" : ",\"visibleDescendantCount\":")
            spans.append(Span(start: start, split: split ?? writer.count))
        }
        spans.append(Span(start: writer.count, split: writer.count))
        self.blob = writer.finish()
        self.spans = spans
        self.titleSpans = titleSpans
        localeTitles = nil
        rowBound =
            RowOpening.maxLength + Self.groupValuesMaxLength + RowSelection.maxLength
            + zip(spans, spans.dropFirst()).reduce(0) { max($0, $1.1.start - $1.0.start) }
    }

    /// The rows in `locale` of `menu`, sharing `base`'s bytes (``init(menu:)`` of the same menu)
    /// for all but the titles.
    ///
    /// - Precondition: `locale` is one of `menu.localeIndices` after the first.
    init(localizing base: EncodedMenu, menu: Menu, locale: Int) {
        precondition(
            locale > 0 && menu.localeIndices.contains(locale) && base.titleSpans.count == menu.nodeCount + 1,
            "locale \(locale) of a menu with \(menu.localeIndices.count) locales, or a base of another menu")
        var writer = JSONWriter(capacity: menu.nodeCount * 24)
        var offsets = [Int]()
        offsets.reserveCapacity(menu.nodeCount + 2)
        offsets.append(0)
        var longest = 0
        for node in menu.nodes {
            offsets.append(writer.count)
            writer.string(menu.title(of: node, locale: locale))
            let row = base.spans[node + 1].start - base.spans[node].start
            longest = max(
                longest,
                row - (base.titleSpans[node].split - base.titleSpans[node].start) + writer.count - offsets[node])
        }
        offsets.append(writer.count)
        blob = base.blob
        spans = base.spans
        titleSpans = []
        localeTitles = LocaleTitles(defaultTitles: base.titleSpans, bytes: writer.finish(), offsets: offsets)
        rowBound = RowOpening.maxLength + Self.groupValuesMaxLength + RowSelection.maxLength + longest
    }

    /// Heap bytes this encoding holds of its own (shared arrays counted by the default's).
    var ownBytes: Int {
        guard let localeTitles else { return blob.count + (spans.count + titleSpans.count) * MemoryLayout<Span>.stride }
        return localeTitles.bytes.count + localeTitles.offsets.count * MemoryLayout<Int>.stride
    }

    /// Appends the JSON array of visible rows `offset ..< offset + limit` of `view` to `writer`
    /// (`[]` when there are none). Each row is three word stores for `{"index":N` (see
    /// ``RowOpening``), one copy of the pre-encoded rest, and for groups `isExpanded` plus a second
    /// copy, with no capacity check per row: when the page's worst case (``rowBound`` per row)
    /// fits in what `writer` has spare, the rows are written as the model's inlinable walk finds
    /// them; otherwise the walk first records the nodes and the exact bytes they take, and the
    /// rows are written after one reservation. O(limit) after the walk finds the first row.
    ///
    /// With `marks`, a row that shows an availability gets its JSON (``AvailabilityMarks``): one
    /// bit test per row, and a copy more for a marked one.
    func writeRows(
        of view: FlattenedView, offset: Int, limit: Int, marks: AvailabilityMarks?, selection: RowSelection,
        to writer: inout JSONWriter
    ) {
        let rowCount = offset >= 0 ? max(0, min(limit, view.count - offset)) : 0
        guard rowCount > 0 else {
            writer.raw("[]")
            return
        }
        let (worstCase, overflow) = rowCount.multipliedReportingOverflow(by: rowBound + (marks?.maxFragmentLength ?? 0))
        var selection = selection
        if !overflow, worstCase < writer.spareCapacity {
            writeRowsAsFound(
                of: view, offset: offset, rowCount: rowCount, marks: marks, selection: &selection,
                maxBytes: worstCase &+ 1, to: &writer)
        } else {
            writeRowsMeasured(
                of: view, offset: offset, rowCount: rowCount, marks: marks, selection: &selection, to: &writer)
        }
    }

    /// Appends the one row object at visible row `index` of `view` (`null` past the end).
    func writeRow(
        of view: FlattenedView, at index: Int, marks: AvailabilityMarks?, selection: RowSelection,
        to writer: inout JSONWriter
    ) {
        writeRow(marks: marks, to: &writer) {
            writeRows(of: view, offset: index, limit: 1, marks: marks, selection: selection, to: &$0)
        }
    }

    /// Appends the one row object `writePage` writes as a page of one row (`null` for an empty
    /// page): the page written into a buffer of its own, its brackets left out.
    func writeRow(marks: AvailabilityMarks?, to writer: inout JSONWriter, _ writePage: (inout JSONWriter) -> Void) {
        var page = JSONWriter(capacity: rowBound + (marks?.maxFragmentLength ?? 0) + 2)
        writePage(&page)
        let bytes = page.bytes
        if bytes.count > 2 { writer.raw(Array(bytes[1 ..< bytes.count - 1])) } else { writer.raw("null") }
    }

    /// One pass: each row written as the walk reaches it, into `maxBytes` reserved at once.
    private func writeRowsAsFound(
        of view: FlattenedView, offset: Int, rowCount: Int, marks: AvailabilityMarks?,
        selection: inout RowSelection, maxBytes: Int, to writer: inout JSONWriter
    ) {
        writer.raw(atMost: maxBytes) { target in
            spans.withUnsafeBufferPointer { spans in
                blob.withUnsafeBytes { blob in
                    withTitlePointers { titles in
                        marks.withPointers { marks in
                            var opening = RowOpening(index: offset)
                            var out = target
                            view.forEachVisibleNode(offset: offset, limit: rowCount) { row in
                                out = Self.writeRow(
                                    row.node, isExpanded: row.isExpanded, of: view, opening: opening, spans: spans,
                                    blob: blob.baseAddress!, titles: titles, marks: marks, selection: &selection,
                                    at: out)
                                opening.advance()
                            }
                            out.storeBytes(of: UInt8(ascii: "]"), as: UInt8.self)
                            return out + 1 - target
                        }
                    }
                }
            }
        }
    }

    /// Unsafe views of ``LocaleTitles`` while one page is written.
    struct TitlePointers {
        let defaultTitles: UnsafePointer<Span>
        let offsets: UnsafePointer<Int>
        let bytes: UnsafeRawPointer

        /// What node `node`'s row takes more in this locale than in the default's (may be negative).
        @inline(__always) func extraBytes(of node: Int) -> Int {
            (offsets[node &+ 1] &- offsets[node]) &- (defaultTitles[node].split &- defaultTitles[node].start)
        }
    }

    /// `body` with ``localeTitles``'s pointers, or nil for the default locale's rows.
    private func withTitlePointers<Result>(_ body: (TitlePointers?) -> Result) -> Result {
        guard let titles = localeTitles else { return body(nil) }
        return titles.defaultTitles.withUnsafeBufferPointer { defaults in
            titles.offsets.withUnsafeBufferPointer { offsets in
                titles.bytes.withUnsafeBytes { bytes in
                    // A menu with rows has titles of two bytes at least; without rows nothing is written.
                    guard let bytes = bytes.baseAddress else { return body(nil) }
                    return body(
                        TitlePointers(defaultTitles: defaults.baseAddress!, offsets: offsets.baseAddress!, bytes: bytes)
                    )
                }
            }
        }
    }

    /// Two passes: the walk records each row's node (bitwise negated unless it is an expanded
    /// group) and sums the exact bytes they take; then the rows are written after one reservation.
    private func writeRowsMeasured(
        of view: FlattenedView, offset: Int, rowCount: Int, marks: AvailabilityMarks?,
        selection: inout RowSelection, to writer: inout JSONWriter
    ) {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: rowCount) { rows in
            spans.withUnsafeBufferPointer { spans in
                withTitlePointers { titles in
                    marks.withPointers { marks in
                        var filled = 0
                        var bytes = 1  // the closing bracket
                        view.forEachVisibleNode(offset: offset, limit: rowCount) { row in
                            rows[filled] = row.isExpanded ? row.node : ~row.node
                            filled &+= 1
                            bytes &+=
                                spans[row.node &+ 1].start &- spans[row.node].start
                                &+ (titles?.extraBytes(of: row.node) ?? 0)
                            if let marks, marks.isMarked(row.node) { bytes &+= marks.fragment(of: row.node).count }
                        }
                        bytes &+=
                            filled &* (RowOpening.maxLength &+ Self.groupValuesMaxLength &+ RowSelection.maxLength)
                        writer.raw(atMost: bytes) { target in
                            blob.withUnsafeBytes { blob in
                                var opening = RowOpening(index: offset)
                                var out = target
                                for position in 0 ..< filled {
                                    let entry = rows[position]
                                    out = Self.writeRow(
                                        entry < 0 ? ~entry : entry, isExpanded: entry >= 0, of: view, opening: opening,
                                        spans: spans, blob: blob.baseAddress!, titles: titles, marks: marks,
                                        selection: &selection, at: out)
                                    opening.advance()
                                }
                                out.storeBytes(of: UInt8(ascii: "]"), as: UInt8.self)
                                return out + 1 - target
                            }
                        }
                    }
                }
            }
        }
    }

    /// Stores node `node`'s row of `view`, opened by `opening`, at `out` (room for ``rowBound``
    /// bytes) and returns where it ends. A group's `visibleDescendantCount` is the one number
    /// computed per row (``FlattenedView/visibleDescendantCount(ofExpandedGroup:)``, O(log m),
    /// only for an expanded group). With `titles`, the row's title is that locale's: three
    /// copies (up to the title, the title, after it) where the default locale's row takes one.
    /// A node `marks` marks gets its availability, and every node its selection fields
    /// (``RowSelection``), before the closing brace (a row) or before the `visibleDescendantCount`
    /// key (a group).
    @inline(__always)
    private static func writeRow(
        _ node: Int, isExpanded: Bool, of view: FlattenedView, opening: RowOpening,
        spans: UnsafeBufferPointer<Span>, blob: UnsafeRawPointer, titles: TitlePointers?,
        marks: AvailabilityMarks.Pointers?, selection: inout RowSelection, at target: UnsafeMutableRawPointer
    ) -> UnsafeMutableRawPointer {
        var out = target
        let (head, tail, end) = (spans[node].start, spans[node].split, spans[node &+ 1].start)
        out += opening.store(at: out)
        if let titles {
            let (before, after) = (titles.defaultTitles[node].start, titles.defaultTitles[node].split)
            let (from, to) = (titles.offsets[node], titles.offsets[node &+ 1])
            out.copyMemory(from: blob + head, byteCount: before &- head)
            out += before &- head
            out.copyMemory(from: titles.bytes + from, byteCount: to &- from)
            out += to &- from
            out.copyMemory(from: blob + after, byteCount: tail &- after)
            out += tail &- after
        } else {
            out.copyMemory(from: blob + head, byteCount: tail &- head)
            out += tail &- head
        }
        let marked = marks?.isMarked(node) ?? false
        guard tail < end else {  // a row: one copy, its closing brace written again after its fields
            out -= 1
            if marked, let marks { out += storeFragment(marks.fragment(of: node), at: out) }
            out += selection.store(node, isGroup: false, at: out)
            out.storeBytes(of: UInt8(ascii: "}"), as: UInt8.self)
            return out + 1
        }
        // A group: its isExpanded goes here, its visibleDescendantCount and closing brace at the end.
        if isExpanded {
            out.storeBytes(of: trueWord.littleEndian, as: UInt32.self)
            out += 4
        } else {
            out.storeBytes(of: falsWord.littleEndian, as: UInt32.self)
            out.storeBytes(of: UInt8(ascii: "e"), toByteOffset: 4, as: UInt8.self)
            out += 5
        }
        let key = end &- Self.descendantCountKeyLength
        out.copyMemory(from: blob + tail, byteCount: key &- tail)
        out += key &- tail
        if marked, let marks { out += storeFragment(marks.fragment(of: node), at: out) }
        out += selection.store(node, isGroup: true, at: out)
        out.copyMemory(from: blob + key, byteCount: Self.descendantCountKeyLength)
        out += Self.descendantCountKeyLength
        out += storeDecimal(isExpanded ? view.visibleDescendantCount(ofExpandedGroup: node) : 0, at: out)
        out.storeBytes(of: UInt8(ascii: "}"), as: UInt8.self)
        return out + 1
    }

    /// `,"level":L,"posInSet":P,"setSize":S`: where a row sits, for a screen reader (`aria-level`,
    /// `aria-posinset`, `aria-setsize`).
    static func writePlacement(level: Int, positionInSet: Int, setSize: Int, to writer: inout JSONWriter) {
        writer.raw(",\"level\":")
        writer.integer(level)
        writer.raw(",\"posInSet\":")
        writer.integer(positionInSet)
        writer.raw(",\"setSize\":")
        writer.integer(setSize)
    }

    /// The length of the placement ``writePlacement(level:positionInSet:setSize:to:)`` wrote at
    /// `start` of `blob` (a node's bytes open with it): its three keys and their digits. O(digits).
    static func placementLength(at start: Int, in blob: UnsafeRawBufferPointer) -> Int {
        var position = start
        for key in [9, 12, 11] {  // `,"level":`, `,"posInSet":`, `,"setSize":`
            position += key
            while position < blob.count, blob[position] >= UInt8(ascii: "0"), blob[position] <= UInt8(ascii: "9") {
                position += 1
            }
        }
        return position - start
    }

    /// `,"visibleDescendantCount":`, which ends every group's bytes.
    static let descendantCountKeyLength = 26

    /// Stores `fragment` at `target`; returns its length.
    @inline(__always)
    private static func storeFragment(_ fragment: UnsafeRawBufferPointer, at target: UnsafeMutableRawPointer) -> Int {
        if let base = fragment.baseAddress { target.copyMemory(from: base, byteCount: fragment.count) }
        return fragment.count
    }

    /// `true` and `fals` as little-endian words (first character in the low byte).
    static let trueWord: UInt32 = 0x6575_7274
    static let falsWord: UInt32 = 0x736C_6166
    /// The most bytes a group's dynamic values take: `false`, ten digits (a count of rows is
    /// below 2^31) and the closing brace.
    static let groupValuesMaxLength = 16

    /// Stores the decimal digits of `value` (0 ..< 10^10) at `target`; returns how many.
    @inline(__always)
    static func storeDecimal(_ value: Int, at target: UnsafeMutableRawPointer) -> Int {
        var length = 1
        var bound = 10
        while value >= bound && length < 10 {
            length &+= 1
            bound &*= 10
        }
        var rest = value
        var position = length
        repeat {
            position &-= 1
            target.storeBytes(of: UInt8(truncatingIfNeeded: 48 &+ rest % 10), toByteOffset: position, as: UInt8.self)
            rest /= 10
        } while position > 0
        return length
    }
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
        guard index < 100_000_000 else {
            digitCount = 0
            return
        }
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
        repeat {
            count += 1
            rest /= 10
        } while rest > 0
        rest = index
        for position in stride(from: 10 + count - 1, through: 10, by: -1) {
            target.storeBytes(of: UInt8(ascii: "0") + UInt8(rest % 10), toByteOffset: position, as: UInt8.self)
            rest /= 10
        }
        return 10 + count
    }
}
