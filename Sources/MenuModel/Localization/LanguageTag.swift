/// The shape of a BCP 47 language tag (RFC 5646 §2.1 `langtag`, and a whole private-use tag
/// `x-…`), and RFC 4647 lookup over a list of tags. Pure byte checks: no registry, so a tag of
/// the right shape whose subtags IANA never registered (`qq-Zzzz`) is well-formed too.
///
/// ```
/// langtag  = language ["-" script] ["-" region] *("-" variant) *("-" extension) ["-" privateuse]
/// language = 2*3ALPHA ["-" extlang] / 4ALPHA / 5*8ALPHA ; extlang = 3ALPHA *2("-" 3ALPHA)
/// script = 4ALPHA ; region = 2ALPHA / 3DIGIT ; variant = 5*8alphanum / (DIGIT 3alphanum)
/// extension = singleton 1*("-" 2*8alphanum) ; privateuse = "x" 1*("-" 1*8alphanum)
/// ```
/// Grandfathered tags (`i-klingon`, `zh-min-nan`) are refused unless they happen to fit. This is
/// RFC 5646's well-formedness (its ABNF), not validity: a singleton or variant given twice is
/// well-formed. openapi.yaml's `lang` pattern is this grammar. Cost: O(length), no allocation.
public enum LanguageTag {
    /// Longer tags are refused (RFC 5646 §4.4.1 asks implementations to take at least 35 bytes).
    public static let maxLength = 64

    /// Whether `tag` has the shape of a BCP 47 language tag (case-insensitive).
    public static func isWellFormed(_ tag: String) -> Bool {
        var tag = tag
        return tag.withUTF8 { isWellFormed($0) }
    }

    /// ``isWellFormed(_:)`` over the tag's bytes.
    public static func isWellFormed(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        var part = Part.language
        var extlangs = 0  // 3 once no extlang may follow
        var start = 0
        var isFirst = true
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "-") { end += 1 }
            let subtag = UnsafeBufferPointer(rebasing: bytes[start ..< end])
            start = end + 1
            let length = subtag.count
            guard length >= 1, length <= 8, subtag.allSatisfy(isAlphanumeric) else { return false }
            let alpha = subtag.allSatisfy(isAlpha)
            if isFirst {
                isFirst = false
                if length == 1 && subtag[0] | 0x20 == UInt8(ascii: "x") {
                    part = .privateStart
                    continue
                }
                guard alpha, length >= 2 else { return false }
                extlangs = length <= 3 ? 0 : 3
                continue
            }
            if part >= .privateStart {
                part = .privateBody
            } else if length == 1 {
                guard part != .extensionStart else { return false }  // a singleton needs a subtag after it
                let singleton = subtag[0] | 0x20
                if singleton == UInt8(ascii: "x") {
                    part = .privateStart
                } else {
                    part = .extensionStart
                }
            } else if part >= .extensionStart {
                part = .extensionBody
            } else if part <= .extlang, alpha, length == 3, extlangs < 3 {
                part = .extlang
                extlangs += 1
            } else if part <= .extlang, alpha, length == 4 {
                part = .script
            } else if part <= .script, (length == 2 && alpha) || (length == 3 && subtag.allSatisfy(isDigit)) {
                part = .region
            } else if length >= 5 || (length == 4 && isDigit(subtag[0])) {
                part = .variant
            } else {
                return false
            }
        }
        return part != .extensionStart && part != .privateStart
    }

    /// Where a subtag stands in a tag; each may only be followed by itself or a later one.
    private enum Part: Int, Comparable {
        case language, extlang, script, region, variant, extensionStart, extensionBody, privateStart, privateBody
        static func < (a: Part, b: Part) -> Bool { a.rawValue < b.rawValue }
    }

    /// RFC 4647 §3.4 lookup of one language range over `tags` (lowercased ASCII, as
    /// ``lowercased(_:)`` gives): the index of the first tag equal to the range, else to the range
    /// with its last subtag removed (and a single-letter subtag left at the end removed with it),
    /// and so on; nil when nothing is left. Case-insensitive. O(range length · tags).
    public static func lookup(_ range: UnsafeBufferPointer<UInt8>, in tags: [[UInt8]]) -> Int? {
        var length = range.count
        while length > 0 {
            let prefix = UnsafeBufferPointer(rebasing: range[0 ..< length])
            if let found = tags.firstIndex(where: {
                $0.count == length && zip($0, prefix).allSatisfy { $0 == $1 | lowerBit(of: $1) }
            }) {
                return found
            }
            // Cut the last subtag, then a singleton the cut leaves at the end.
            repeat {
                while length > 0, range[length - 1] != UInt8(ascii: "-") { length -= 1 }
                if length > 0 { length -= 1 }
            } while length >= 2 && range[length - 2] == UInt8(ascii: "-")
                || length == 1
        }
        return nil
    }

    /// A tag in lowercase ASCII: the form ``lookup(_:in:)`` compares with.
    public static func lowercased(_ tag: String) -> [UInt8] {
        tag.utf8.map { $0 | lowerBit(of: $0) }
    }

    @inline(__always) public static func lowerBit(of byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? 0x20 : 0
    }

    @inline(__always) public static func isAlpha(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }
    @inline(__always) public static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
    @inline(__always) public static func isAlphanumeric(_ byte: UInt8) -> Bool { isAlpha(byte) || isDigit(byte) }
}
