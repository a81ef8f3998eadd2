// Any JSON value as the tests read it (the wire types are MenuAppTestSupport's WireFormat).

import Foundation
import MenuModel

/// Any JSON value, for checking key sets and pass-through attributes.
package enum LiveJSON: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([LiveJSON])
    case object([String: LiveJSON])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([LiveJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: LiveJSON].self))
        }
    }

    package subscript(key: String) -> LiveJSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    package var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    package var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    package var arrayValue: [LiveJSON]? { if case .array(let value) = self { value } else { nil } }
    package var objectValue: [String: LiveJSON]? { if case .object(let value) = self { value } else { nil } }
}

extension LiveJSON {
    /// A config value as it reads back from JSON (every number a `Double`).
    package init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .integer(let value): self = .number(Double(value))
        case .number(let value): self = .number(value.doubleValue)
        case .string(let value): self = .string(value)
        case .array(let values): self = .array(values.map(LiveJSON.init))
        case .object(let members): self = .object(members.mapValues(LiveJSON.init))
        }
    }
}
