import TimeZoneRules

extension Menu {
    /// The IANA name of the zone of the menu's opening hours (its config's `timeZone`), nil without one.
    public var timeZoneName: String? { timeZone?.name }

    /// Rows (not groups) in the whole menu. O(1).
    public var totalLeafCount: Int { leafCount(of: 0) }

    /// Every attribute name some node has, sorted, each with the JSON types its values take there
    /// (`string`, `number`, `boolean`, `null`, `array`, `object`; sorted): what a client needs to
    /// build filters and to show attributes without guessing. O(attribute objects · keys): one
    /// pass over the attribute objects the menu keeps.
    public func attributeTypes() -> [(name: String, types: [String])] {
        var types: [String: Set<String>] = [:]
        for attributes in storage.attributes {
            for (name, value) in attributes { types[name, default: []].insert(value.typeName) }
        }
        return types.keys.sorted().map { ($0, types[$0]!.sorted()) }
    }
}

extension JSONValue {
    /// The JSON type of the value, as JSON Schema names it (an integer is a `number`).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer, .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
