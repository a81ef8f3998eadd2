/// One row of the flat table as `GET /rows` sends it: a group or a row of the menu at `index`.
///
/// Groups carry `isExpanded`, `childCount` and `visibleDescendantCount` (the rows a collapse would
/// remove now, 0 when collapsed); rows have them nil. `attributes` is nil when the config gives
/// none. A row handed out by ``MenuTable`` has the `index` it has in the table now.
public struct MenuRow: Sendable, Hashable, Codable {
    public var index: Int
    public var id: String
    public var title: String
    public var depth: Int
    public var parentId: String?
    public var isGroup: Bool
    public var isExpanded: Bool?
    public var childCount: Int?
    public var attributes: [String: MenuJSONValue]?
    public var visibleDescendantCount: Int?

    public init(
        index: Int, id: String, title: String, depth: Int, parentId: String?, isGroup: Bool, isExpanded: Bool? = nil,
        childCount: Int? = nil, attributes: [String: MenuJSONValue]? = nil, visibleDescendantCount: Int? = nil
    ) {
        self.index = index
        self.id = id
        self.title = title
        self.depth = depth
        self.parentId = parentId
        self.isGroup = isGroup
        self.isExpanded = isExpanded
        self.childCount = childCount
        self.attributes = attributes
        self.visibleDescendantCount = visibleDescendantCount
    }

    private enum CodingKeys: String, CodingKey {
        case index, id, title, depth, parentId, isGroup, isExpanded, childCount, attributes, visibleDescendantCount
    }

    /// As the server writes it: `parentId` always present (`null` at the top), the group fields
    /// only on groups, `attributes` only when there are some.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(depth, forKey: .depth)
        try container.encode(parentId, forKey: .parentId)
        try container.encode(isGroup, forKey: .isGroup)
        try container.encodeIfPresent(isExpanded, forKey: .isExpanded)
        try container.encodeIfPresent(childCount, forKey: .childCount)
        try container.encodeIfPresent(attributes, forKey: .attributes)
        try container.encodeIfPresent(visibleDescendantCount, forKey: .visibleDescendantCount)
    }
}
