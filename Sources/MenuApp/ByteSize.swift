/// Byte sizes as flags take and `--help` shows them: decimal digits, optionally followed by one
/// of `K`, `M`, `G`, `T` (powers of 1024, either case).
package enum ByteSize {
    private static let units: [(suffix: Character, shift: Int)] = [("K", 10), ("M", 20), ("G", 30), ("T", 40)]

    /// The bytes `text` names; nil when it is not of that form or overflows.
    package static func parse(_ text: String) -> Int? {
        var digits = Substring(text)
        var shift = 0
        if let last = digits.last, let unit = units.first(where: { String($0.suffix) == last.uppercased() }) {
            shift = unit.shift
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let value = Int(digits), value <= Int.max >> shift
        else { return nil }
        return value << shift
    }

    /// `bytes` in the largest unit that divides it (`32M`, `1536K`, `1000`).
    package static func text(of bytes: Int) -> String {
        for unit in units.reversed() where bytes > 0 && bytes % (1 << unit.shift) == 0 {
            return "\(bytes >> unit.shift)\(unit.suffix)"
        }
        return String(bytes)
    }
}
