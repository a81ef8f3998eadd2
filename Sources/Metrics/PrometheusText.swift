/// Writes the Prometheus text exposition format, version 0.0.4: for each metric family a
/// `# HELP` and a `# TYPE` line, then its samples `name{label="value",…} number`.
///
/// Invariant: every family's lines are contiguous and its samples follow its `# TYPE`; label
/// values and help texts are escaped as the format requires (`\\`, `\"`, `\n`), so nothing a
/// caller passes can break a line. Names are the caller's (`[a-zA-Z_:][a-zA-Z0-9_:]*`; checked).
/// Cost: O(output); one growing string.
package struct PrometheusText: Sendable {
    /// The media type of the output.
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A family's type. (0.0.4 has no info type: an info metric is a gauge of value 1 whose
    /// labels carry the information.)
    package enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    package private(set) var text = ""

    package init() {}

    /// Starts a family: its `# HELP` and `# TYPE` lines.
    package mutating func family(_ name: String, _ kind: Kind, help: String) {
        precondition(Self.isValidName(name), "metric name \(name) is not [a-zA-Z_:][a-zA-Z0-9_:]*")
        text += "# HELP \(name) \(Self.escaped(help, quotes: false))\n"
        text += "# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample line.
    package mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Int) {
        text += name + Self.labelText(labels) + " \(value)\n"
    }

    /// One sample line with a fractional value (seconds, bytes); written as Swift's shortest
    /// round-trip form, which Prometheus parses.
    package mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Double) {
        text += name + Self.labelText(labels) + " " + Self.number(value) + "\n"
    }

    /// A family with one unlabelled sample.
    package mutating func single(_ name: String, _ kind: Kind, help: String, _ value: Int) {
        family(name, kind, help: help)
        sample(name, [], value)
    }

    /// The `_bucket`, `_sum` and `_count` lines of one histogram series (the family already
    /// started with kind `.histogram`); `bounds` in seconds, `cumulative` one longer (`+Inf`).
    package mutating func histogramSeries(
        _ name: String, _ labels: [(String, String)], bounds: [Double],
        cumulative: [Int], sum: Double
    ) {
        precondition(cumulative.count == bounds.count + 1)
        for (bound, count) in zip(bounds.map(Self.number) + ["+Inf"], cumulative) {
            sample(name + "_bucket", labels + [("le", bound)], count)
        }
        sample(name + "_sum", labels, sum)
        sample(name + "_count", labels, cumulative.last ?? 0)
    }

    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
    }

    static func labelText(_ labels: [(String, String)]) -> String {
        guard !labels.isEmpty else { return "" }
        return "{" + labels.map { "\($0.0)=\"\(escaped($0.1, quotes: true))\"" }.joined(separator: ",") + "}"
    }

    /// `text` with `\` and a newline escaped, and `"` too in a label value.
    static func escaped(_ text: String, quotes: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\"" where quotes: out += "\\\""
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a") ... UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A") ... UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: ":")
        }
    }
}
