import HTTPCore
import MenuModel

/// A request's `Accept-Language` (RFC 9110 §12.5.4): language ranges, each with a quality, and
/// the locale of a menu they choose by RFC 4647 §3.4 lookup.
///
/// Parsing is lenient, as RFC 9110 §12.5.4 allows a server to ignore a header it cannot use:
/// elements are separated by commas with optional spaces and tabs around them, empty elements
/// are skipped, and an element that is not `language-range [ OWS ";" OWS "q=" qvalue ]` (a range
/// is `*` or 1-8 letters then `-` 1-8 letters or digits, repeated; a qvalue is `0`-`1` with up
/// to three decimals) is ignored on its own, so a wholly malformed header is as if absent and
/// never an error. Repeated header lines are one list.
///
/// Invariant: `ranges` holds at most ``maxRanges`` well-formed ranges in header order, each with
/// a quality in 0...1000 (thousandths). Cost: one pass over the header bytes; choosing a locale
/// is O(ranges · log ranges + ranges · locales · range length), no allocation beyond the ranges.
package struct LanguagePreference: Sendable, Equatable {
    package struct Range: Sendable, Equatable {
        /// The range's bytes as sent (`*` for any).
        package var tag: [UInt8]
        /// Thousandths: `q=0.5` is 500; no `q` is 1000; 0 means "not acceptable".
        package var quality: Int
    }

    package var ranges: [Range] = []
    /// Ranges past this many are ignored (a client lists a few; a longer list only costs time).
    package static let maxRanges = 32

    /// Parses the values of every `Accept-Language` line, in order.
    package init(values: [[UInt8]]) {
        for value in values {
            var start = 0
            while start <= value.count, ranges.count < Self.maxRanges {
                var end = start
                while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
                if let range = Self.element(value[start ..< end]) { ranges.append(range) }
                start = end + 1
            }
        }
    }

    /// The `Accept-Language` lines of a request's `headers`; no ranges without the header.
    package init(headers: HTTPFields) {
        self.init(
            values: headers.indices.filter { headers.name(at: $0, equals: "accept-language") }.map { position in
                headers.withValue(at: position) { Array($0 ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
            })
    }

    /// One list element, or nil when it is empty or malformed.
    private static func element(_ bytes: ArraySlice<UInt8>) -> Range? {
        let trimmed = bytes.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        guard !trimmed.isEmpty else { return nil }
        let parts = trimmed.split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false)
        let tag = Array(parts[0].reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed())
        guard isRange(tag) else { return nil }
        guard parts.count == 2 else { return Range(tag: tag, quality: 1000) }
        let weight = Array(parts[1].drop { $0 == 0x20 || $0 == 0x09 })
        guard weight.count >= 3, weight[0] | 0x20 == UInt8(ascii: "q"), weight[1] == UInt8(ascii: "="),
            let quality = qvalue(weight[2...])
        else { return nil }
        return Range(tag: tag, quality: quality)
    }

    /// `*`, or `1*8ALPHA *("-" 1*8alphanum)`.
    package static func isRange(_ tag: [UInt8]) -> Bool {
        if tag == [UInt8(ascii: "*")] { return true }
        let subtags = tag.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard let first = subtags.first, tag.count <= LanguageTag.maxLength else { return false }
        return first.allSatisfy(LanguageTag.isAlpha)
            && subtags.allSatisfy { (1 ... 8).contains($0.count) && $0.allSatisfy(LanguageTag.isAlphanumeric) }
    }

    /// `0[.ddd]` or `1[.000]` in thousandths.
    static func qvalue(_ text: ArraySlice<UInt8>) -> Int? {
        guard let whole = text.first, whole == UInt8(ascii: "0") || whole == UInt8(ascii: "1") else { return nil }
        var value = Int(whole - UInt8(ascii: "0")) * 1000
        let rest = text.dropFirst()
        guard !rest.isEmpty else { return value }
        guard rest.first == UInt8(ascii: "."), rest.count <= 4 else { return nil }
        var scale = 100
        for digit in rest.dropFirst() {
            guard LanguageTag.isDigit(digit) else { return nil }
            value += Int(digit - UInt8(ascii: "0")) * scale
            scale /= 10
        }
        return value <= 1000 ? value : nil
    }

    /// The index in `tags` (lowercased, the default first) of the locale these ranges choose:
    /// ranges by quality, highest first (ties in header order); each range by lookup (its tag,
    /// then shorter along it); `*` takes the first tag. A tag a `q=0` range covers (equal to
    /// it, or it followed by `-`) is never chosen. nil when no range chooses one (the caller
    /// answers in the default locale).
    package func locale(among tags: [[UInt8]]) -> Int? {
        guard !ranges.isEmpty, !tags.isEmpty else { return nil }
        let refused = ranges.filter { $0.quality == 0 && $0.tag != [UInt8(ascii: "*")] }.map {
            LanguageTag.lowercased(String(decoding: $0.tag, as: UTF8.self))
        }
        func isRefused(_ tag: [UInt8]) -> Bool {
            refused.contains {
                $0 == tag || (tag.count > $0.count && tag.starts(with: $0) && tag[$0.count] == UInt8(ascii: "-"))
            }
        }
        let ordered = ranges.enumerated().filter { $0.element.quality > 0 }
            .sorted { ($0.element.quality, -$0.offset) > ($1.element.quality, -$1.offset) }
        for (_, range) in ordered {
            if range.tag == [UInt8(ascii: "*")] {
                if let any = tags.firstIndex(where: { !isRefused($0) }) { return any }
                continue
            }
            let found = range.tag.withUnsafeBufferPointer { LanguageTag.lookup($0, in: tags) }
            if let found, !isRefused(tags[found]) { return found }
        }
        return nil
    }
}
