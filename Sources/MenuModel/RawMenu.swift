/// The config exactly as written, decoded leniently: problems are recorded, never thrown,
/// so one load reports all of them. Validation and paths come later, in ``MenuBuilder``.
struct RawMenu: Decodable {
    var title: String?
    var items: [RawNode]?
    var problems: [RawProblem] = []

    init(from decoder: any Decoder) throws {
        var fields = LenientFields(decoder: decoder, problems: &problems)
        guard let container = fields.container else { return }
        for key in container.allKeys {
            switch key.stringValue {
            case "title": title = fields.decode(String.self, key, expected: "a string")
            case "items": items = fields.decode([RawNode].self, key, expected: "an array of nodes")
            default: fields.record(.init(key: key.stringValue, kind: .unknownKey, value: "\"\(key.stringValue)\""))
            }
        }
        if items == nil, !container.contains(JSONKey("items")) {
            fields.record(.init(key: nil, kind: .missingKey, value: "\"items\""))
        }
        problems = fields.problems
    }
}

/// One node as written. `items == nil` means a row.
struct RawNode: Decodable {
    var id: String?
    var title: String?
    var items: [RawNode]?
    var expanded: Bool?
    var attributes: [String: JSONValue]?
    var problems: [RawProblem] = []

    init(from decoder: any Decoder) throws {
        var fields = LenientFields(decoder: decoder, problems: &problems)
        guard let container = fields.container else { return }
        var sawID = false
        var sawTitle = false
        for key in container.allKeys {
            switch key.stringValue {
            case "id":
                sawID = true
                id = fields.decode(String.self, key, expected: "a string")
            case "title":
                sawTitle = true
                title = fields.decode(String.self, key, expected: "a string")
            case "items": items = fields.decode([RawNode].self, key, expected: "an array of nodes")
            case "expanded": expanded = fields.decode(Bool.self, key, expected: "true or false")
            case "attributes": attributes = fields.decode([String: JSONValue].self, key, expected: "an object")
            default: fields.record(.init(key: key.stringValue, kind: .unknownKey, value: "\"\(key.stringValue)\""))
            }
        }
        if !sawID { fields.record(.init(key: nil, kind: .missingKey, value: "\"id\"")) }
        if !sawTitle { fields.record(.init(key: nil, kind: .missingKey, value: "\"title\"")) }
        problems = fields.problems
    }
}

/// A problem found while decoding one object; `key` is relative to that object (nil: the object itself).
struct RawProblem: Sendable {
    var key: String?
    var kind: ConfigProblem.Kind
    var value: String

    /// A stable order for one object's problems (JSON objects' keys come back unordered).
    static func documentOrder(_ a: RawProblem, _ b: RawProblem) -> Bool {
        func rank(_ key: String?) -> (Int, String) {
            switch key {
            case nil: (0, "")
            case "id"?: (1, "")
            case "title"?: (2, "")
            case "expanded"?: (3, "")
            case "items"?: (4, "")
            case "attributes"?: (5, "")
            case let other?: (6, other)
            }
        }
        return rank(a.key) < rank(b.key)
    }
}

/// Decodes an object's fields, turning type mismatches into recorded problems.
private struct LenientFields {
    var container: KeyedDecodingContainer<JSONKey>?
    var problems: [RawProblem]

    init(decoder: any Decoder, problems: inout [RawProblem]) {
        self.problems = problems
        do {
            container = try decoder.container(keyedBy: JSONKey.self)
        } catch {
            let found = (try? decoder.singleValueContainer().decode(JSONValue.self))?.excerpt() ?? "a value"
            self.problems.append(.init(key: nil, kind: .wrongType(expected: "an object"), value: found))
            problems = self.problems
        }
    }

    mutating func record(_ problem: RawProblem) { problems.append(problem) }

    mutating func decode<T: Decodable>(_ type: T.Type, _ key: JSONKey, expected: String) -> T? {
        guard let container else { return nil }
        do {
            return try container.decode(T.self, forKey: key)
        } catch {
            let found = (try? container.decode(JSONValue.self, forKey: key))?.excerpt() ?? "a value of another type"
            record(.init(key: key.stringValue, kind: .wrongType(expected: expected), value: found))
            return nil
        }
    }
}
