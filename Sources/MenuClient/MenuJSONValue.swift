/// Any JSON value: a row's `attributes` (passed through from the menu config unchanged) and the
/// portable session state, which the client keeps and sends back without interpreting all of it.
///
/// Numbers are `Double`: an attribute integer beyond 2^53 (which the server passes through as
/// written) loses precision here. Equality is structural.
public enum MenuJSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([MenuJSONValue])
    case object([String: MenuJSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([MenuJSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: MenuJSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The member `key` of an object; nil for anything else or a missing key.
    public subscript(key: String) -> MenuJSONValue? {
        if case .object(let object) = self { object[key] } else { nil }
    }

    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    public var numberValue: Double? { if case .number(let value) = self { value } else { nil } }
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var arrayValue: [MenuJSONValue]? { if case .array(let value) = self { value } else { nil } }
}
