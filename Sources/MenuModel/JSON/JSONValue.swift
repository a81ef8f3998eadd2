/// A JSON value carried through the model unchanged (a node's `attributes`).
///
/// Invariant: integers that fit in `Int64` stay `.integer` (38 stays 38); every other number is
/// `.number` with its text as written (``JSONNumber``: 1.10 stays 1.10). Object key order is not
/// significant. The `Encodable` conformance goes through `Double` (Foundation's encoders have no raw
/// number text): the config parser and the server's JSON writer keep the text, it does not.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        switch self {
        case .null: try single.encodeNil()
        case .bool(let value): try single.encode(value)
        case .integer(let value): try single.encode(value)
        case .number(let value): try single.encode(value.doubleValue)
        case .string(let value): try single.encode(value)
        case .array(let values): try single.encode(values)
        case .object(let values): try single.encode(values)
        }
    }
}

extension JSONValue {
    /// A short, human-readable rendering for error messages (compact JSON, cut at `limit` characters).
    func excerpt(limit: Int = 60) -> String {
        let text: String
        switch self {
        case .null: text = "null"
        case .bool(let value): text = value ? "true" : "false"
        case .integer(let value): text = String(value)
        case .number(let value): text = value.text
        case .string(let value): text = "\"" + value + "\""
        case .array(let values): text = "[" + values.map { $0.excerpt(limit: limit) }.joined(separator: ",") + "]"
        case .object(let values):
            text =
                "{"
                + values.keys.sorted().map { "\"\($0)\":" + values[$0]!.excerpt(limit: limit) }.joined(separator: ",")
                + "}"
        }
        return text.count > limit ? String(text.prefix(limit)) + "…" : text
    }
}
