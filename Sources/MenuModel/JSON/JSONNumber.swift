/// A JSON number that is not an integer fitting `Int64`, kept as the text the config wrote
/// (18446744073709551615 stays 18446744073709551615, 1.10 stays 1.10, 1e3 stays 1e3): a node's
/// attributes pass to rows unchanged, and a client that reads them as decimals or big integers
/// gets what the menu's author wrote, not the nearest `Double`.
///
/// Invariant: `text` matches JSON's number grammar (RFC 8259 §6) and is within `Double`'s range
/// (``doubleInRange(_:)``: neither overflowing to infinity nor a nonzero number underflowing to
/// zero), so a writer copies it into JSON as is. Equality is the text's: 1.10 and 1.1 differ.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible, ExpressibleByFloatLiteral {
    /// The number as written.
    public let text: String

    /// The nearest `Double` (for readers that compute with it).
    public var doubleValue: Double { Double(text)! }

    /// `value`'s shortest text that reads back as it (12.5 is "12.5", 1e300 is "1e+300").
    public init(_ value: Double) {
        precondition(value.isFinite, "JSON has no \(value)")
        text = value.description
    }

    public init(floatLiteral value: Double) { self.init(value) }

    /// nil unless `text` is a JSON number within `Double`'s range (``doubleInRange(_:)``).
    public init?(text: String) {
        guard Self.isNumberGrammar(text.utf8), Self.doubleInRange(text) != nil else { return nil }
        self.text = text
    }

    /// For text the config parser has already read as a JSON number within range.
    init(checkedText text: String) { self.text = text }

    /// The `Double` that number `text` (JSON's grammar, already checked) names, or nil when it is
    /// out of `Double`'s range either way: too large (1e400 overflows to infinity) or too small
    /// (1e-400, nonzero as written, underflows to zero). Both are refused alike, so no number
    /// silently becomes another; a subnormal such as 5e-324 is in range, and so is any zero
    /// (0, -0.0, 0e-400).
    static func doubleInRange(_ text: String) -> Double? {
        guard let value = Double(text), value.isFinite else { return nil }
        if value == 0 {
            let significand = text.utf8.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
            guard significand.allSatisfy({ $0 < UInt8(ascii: "1") || $0 > UInt8(ascii: "9") }) else { return nil }
        }
        return value
    }

    public var description: String { text }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`
    private static func isNumberGrammar(_ utf8: String.UTF8View) -> Bool {
        var bytes = utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        if bytes.first == UInt8(ascii: "0") {
            bytes = bytes.dropFirst()
        } else if digits() == 0 {
            return false
        }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
