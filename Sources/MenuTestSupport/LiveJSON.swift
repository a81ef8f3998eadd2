// JSON bodies as the tests read them: any JSON value, and a row of GET /rows.

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

package struct LiveRow: Decodable, Equatable, Sendable {
    package var index: Int
    package var id: String
    package var title: String
    package var depth: Int
    package var isGroup: Bool
    package var isExpanded: Bool?
    package var childCount: Int?
    package var attributes: [String: LiveJSON]?
    package var parentId: String?
    package var visibleDescendantCount: Int?

    package init(index: Int, id: String, title: String, depth: Int, isGroup: Bool, isExpanded: Bool?, childCount: Int?,
                 attributes: [String: LiveJSON]?, parentId: String?, visibleDescendantCount: Int?) {
        self.index = index
        self.id = id
        self.title = title
        self.depth = depth
        self.isGroup = isGroup
        self.isExpanded = isExpanded
        self.childCount = childCount
        self.attributes = attributes
        self.parentId = parentId
        self.visibleDescendantCount = visibleDescendantCount
    }
}

extension LiveRow {
    /// The row as the server should send it for `model`.
    package init(_ model: FlattenedRow) {
        self.init(index: model.index, id: model.id, title: model.title, depth: model.depth, isGroup: model.isGroup,
                  isExpanded: model.isExpanded, childCount: model.childCount,
                  attributes: model.attributes?.mapValues(LiveJSON.init), parentId: model.parentID,
                  visibleDescendantCount: model.visibleDescendantCount)
    }
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
