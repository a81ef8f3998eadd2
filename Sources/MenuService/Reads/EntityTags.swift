import HTTPCore
import MenuSessions

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The value of an `If-Match` or `If-None-Match` request header (RFC 9110 §13.1.1, §13.1.2):
/// `*`, or a list of entity tags, each strong (`"x"`) or weak (`W/"x"`).
///
/// Parsing follows the list rule of RFC 9110 §5.6.1: elements separated by commas with optional
/// spaces and tabs around them, empty elements ignored; repeated header lines are one list. An
/// opaque tag holds `etagc` bytes only (`!`, `#`-`~` and obs-text 0x80-0xFF; no `"`, space or
/// control byte). Anything else is refused as a whole (the caller answers 400): a malformed
/// precondition must not silently become "no precondition".
///
/// Invariant: `tags` is empty exactly when the header was `*`; every tag is as sent, without its
/// quotes. Cost: one pass over the header bytes; at most ``maxTags`` tags are kept.
package struct EntityTagCondition: Sendable, Equatable {
    /// One entity tag of a list.
    package struct Tag: Sendable, Equatable {
        package var isWeak: Bool
        /// The opaque tag's bytes between the quotes.
        package var opaque: [UInt8]
    }

    /// True for `*`: any current representation.
    package var matchesAny: Bool
    package var tags: [Tag]

    /// More tags than a client can mean: a longer list is refused.
    package static var maxTags: Int { 64 }

    /// Why a header value is not a valid condition.
    package struct Malformed: Error, Sendable, Equatable {
        package var reason: String
    }

    /// Parses the values of every header line of one precondition field, in order.
    package init(values: [[UInt8]]) throws(Malformed) {
        var matchesAny = false
        var tags: [Tag] = []
        var scan = Scan()
        var failure: Malformed?
        for value in values where failure == nil {
            value.withUnsafeBytes { bytes in
                do throws(Malformed) {
                    try scan.next(bytes) { isWeak, opaque in
                        if let opaque {
                            tags.append(Tag(isWeak: isWeak, opaque: Array(opaque)))
                        } else {
                            matchesAny = true
                        }
                    }
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
        try scan.finish()
        self.matchesAny = matchesAny
        self.tags = tags
    }

    /// The list grammar over the lines of one field, one line at a time, with no allocation: each
    /// element reaches `element` as (weak, opaque bytes), or (false, nil) for `*`, valid during
    /// the call. ``finish()`` refuses an empty field and a `*` in a list.
    struct Scan {
        private var elements = 0
        private var sawStar = false

        mutating func next(
            _ bytes: UnsafeRawBufferPointer,
            _ element: (Bool, Slice<UnsafeRawBufferPointer>?) throws(Malformed) -> Void
        ) throws(Malformed) {
            var index = 0
            func skipSpace() { while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 } }
            while true {
                skipSpace()
                if index == bytes.count { break }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                elements += 1
                if bytes[index] == UInt8(ascii: "*") {
                    index += 1
                    sawStar = true
                    try element(false, nil)
                } else {
                    var isWeak = false
                    if bytes.count - index >= 2, bytes[index] == UInt8(ascii: "W"),
                        bytes[index + 1] == UInt8(ascii: "/")
                    {
                        isWeak = true
                        index += 2
                    }
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                        throw Malformed(reason: "an entity tag must be quoted, as \"tag\" or W/\"tag\"")
                    }
                    index += 1
                    let start = index
                    while index < bytes.count, EntityTagCondition.isTagByte(bytes[index]) { index += 1 }
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                        throw Malformed(
                            reason: "an entity tag has no closing quote or holds a space, quote or control byte")
                    }
                    if elements > EntityTagCondition.maxTags {
                        throw Malformed(reason: "more than \(EntityTagCondition.maxTags) entity tags")
                    }
                    try element(isWeak, bytes[start ..< index])
                    index += 1
                }
                skipSpace()
                guard index == bytes.count || bytes[index] == UInt8(ascii: ",") else {
                    throw Malformed(reason: "entity tags must be separated by commas")
                }
            }
        }

        func finish() throws(Malformed) {
            guard elements > 0 else { throw Malformed(reason: "the header is empty; send * or a list of entity tags") }
            guard !sawStar || elements == 1 else { throw Malformed(reason: "* must stand alone, not in a list") }
        }
    }

    /// Whether `request`'s `If-None-Match` fails for `current` (RFC 9110 §13.1.2, weak
    /// comparison: `*`, or a tag, weak or not, with `current`'s opaque bytes); nil without the
    /// header. Scans the header in place: no allocation for a well-formed one (the 304 path).
    package static func noneMatchFails(in request: HTTPRequest, current: SessionEntityTag) throws(APIError) -> Bool? {
        let headers = request.headers
        var scan = Scan()
        var found = false
        var matched = false
        var malformed: Malformed?
        for position in headers.indices where headers.name(at: position, equals: "if-none-match") {
            found = true
            headers.withValue(at: position) { value in
                do throws(Malformed) {
                    try scan.next(value ?? UnsafeRawBufferPointer(start: nil, count: 0)) { _, opaque in
                        matched =
                            matched || opaque.map { current.hasOpaque(UnsafeRawBufferPointer(rebasing: $0)) } ?? true
                    }
                } catch {
                    malformed = error
                }
            }
            if malformed != nil { break }
        }
        guard found else { return nil }
        if malformed == nil { do { try scan.finish() } catch { malformed = error } }
        if let malformed { throw invalid(malformed, "If-None-Match") }
        return matched
    }

    static func invalid(_ malformed: Malformed, _ displayName: String) -> APIError {
        .invalidParameter(
            "\(displayName): \(malformed.reason); send the ETag of a GET /rows or /count as it came, e.g. \(displayName): \"v-3\""
        )
    }

    /// `etagc` (RFC 9110 §8.8.3): `!`, `#` to `~`, obs-text.
    static func isTagByte(_ byte: UInt8) -> Bool { byte == 0x21 || (byte >= 0x23 && byte != 0x7F) }

    /// The `If-Match` (`field` "if-match") or `If-None-Match` condition of `request`; nil when it
    /// sends none. `.invalidParameter` naming the header for a malformed one.
    static func parse(_ field: StaticString, of request: HTTPRequest, named displayName: String) throws(APIError)
        -> EntityTagCondition?
    {
        let headers = request.headers
        let positions = headers.indices.filter { headers.name(at: $0, equals: field) }
        guard !positions.isEmpty else { return nil }
        let values = positions.map { position in
            headers.withValue(at: position) { Array($0 ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
        }
        do {
            return try EntityTagCondition(values: values)
        } catch let malformed {
            throw invalid(malformed, displayName)
        }
    }

    /// `If-None-Match` (weak comparison, RFC 9110 §8.8.3.2): true when `*` or a tag, weak or
    /// not, has the opaque bytes of `current`.
    package func noneMatchFails(current: SessionEntityTag) -> Bool {
        matchesAny || tags.contains { $0.opaque.elementsEqual(current.opaque) }
    }

    /// The `If-Match` revisions on `prefix`'s menu (strong comparison: a weak tag never matches):
    /// nil for `*` (any state of the resource passes), else the revisions named by strong tags
    /// of that menu, possibly none (then every write is refused).
    package func revisionCondition(prefix: [UInt8]) -> RevisionCondition? {
        revisionCondition(prefixes: [prefix])
    }

    /// ``revisionCondition(prefix:)`` where a tag may start with any of `prefixes` (one per
    /// locale of the menu: a write does not depend on the locale its client reads in, so a tag
    /// of the session's state in any locale names its revision).
    package func revisionCondition(prefixes: [[UInt8]]) -> RevisionCondition? {
        if matchesAny { return nil }
        return RevisionCondition(
            accepting: tags.compactMap { tag in
                tag.isWeak
                    ? nil : prefixes.lazy.compactMap { SessionEntityTag.revision(in: tag.opaque, prefix: $0) }.first
            })
    }
}

/// The strong entity tag of a session's rows and count: `"<version>-<revision>"` (with the
/// locale, the availability overlay's revision and a filter's part between, when there are
/// any: ``ReadContext``), the version
/// with every byte outside `A-Z a-z 0-9 . _ ~` percent-encoded (so the tag is always valid and
/// the last `-` ends the version). The same tag for `/rows` and `/count` of one session state,
/// so a client may send any tag it holds; the anonymous view is revision 0.
///
/// Invariant: `opaque` is `prefix` followed by the revision in decimal without leading zeros.
package struct SessionEntityTag: Sendable, Equatable {
    package var opaque: [UInt8]

    /// One allocation: the prefix copied into a buffer sized for it and the digits.
    package init(prefix: [UInt8], revision: Int) {
        var opaque = [UInt8]()
        opaque.reserveCapacity(prefix.count + 20)
        opaque.append(contentsOf: prefix)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes on the stack, enough for an Int
        withUnsafeMutableBytes(of: &digits) { buffer in
            var value = UInt(max(revision, 0))
            var end = buffer.count
            repeat {
                end -= 1
                buffer[end] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            } while value > 0
            opaque.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[end...]))
        }
        self.opaque = opaque
    }

    /// Whether `bytes` are this tag's opaque bytes: one `memcmp` (`elementsEqual` goes byte by
    /// byte, 500 instructions for a 20-byte tag).
    func hasOpaque(_ bytes: UnsafeRawBufferPointer) -> Bool {
        opaque.withUnsafeBytes { opaque in
            opaque.count == bytes.count
                && (bytes.isEmpty || memcmp(opaque.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
        }
    }

    /// A tag of these opaque bytes (tests and the fuzz target).
    package init(opaque: [UInt8]) {
        self.opaque = opaque
    }

    /// The header value, quotes included.
    package var headerValue: String {
        String(unsafeUninitializedCapacity: opaque.count + 2) { buffer in
            buffer[0] = UInt8(ascii: "\"")
            _ = UnsafeMutableBufferPointer(rebasing: buffer[1 ..< opaque.count + 1]).initialize(from: opaque)
            buffer[opaque.count + 1] = UInt8(ascii: "\"")
            return opaque.count + 2
        }
    }

    /// What every tag of a menu starts with: its encoded version and `-`. O(version).
    package static func prefix(version: String) -> [UInt8] {
        var bytes: [UInt8] = []
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in version.utf8 {
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                UInt8(ascii: "0") ... UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return bytes + [UInt8(ascii: "-")]
    }

    /// The revision an opaque tag names on the menu of `prefix`: nil when it is of another menu
    /// or not a canonical decimal (a tag this server never sent).
    static func revision(in opaque: [UInt8], prefix: [UInt8]) -> Int? {
        guard opaque.count > prefix.count, opaque.starts(with: prefix) else { return nil }
        var start = prefix.count
        // A read after a change of availability has the overlay's part (`a`, its revision, `-`).
        if opaque[start] == UInt8(ascii: "a") {
            guard let dash = opaque[start...].firstIndex(of: UInt8(ascii: "-")),
                canonicalRevision(opaque[(start + 1) ..< dash]) != nil
            else { return nil }
            start = dash + 1
        }
        // A filtered page's tag has its query's part (`s`, 16 hex digits, `-`) before the revision.
        let query = MenuAPI.queryTagPartLength
        let skip =
            opaque.count - start > query && opaque[start] == UInt8(ascii: "s")
                && opaque[start + query - 1] == UInt8(ascii: "-") ? query : 0
        return canonicalRevision(opaque[(start + skip)...])
    }

    /// The revision `digits` spell: canonical decimal (no leading zero), 1 to 18 digits, else nil.
    static func canonicalRevision<Digits: Collection<UInt8>>(_ digits: Digits) -> Int? {
        guard !digits.isEmpty, digits.count <= 18, digits.first != UInt8(ascii: "0") || digits.count == 1 else {
            return nil
        }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
