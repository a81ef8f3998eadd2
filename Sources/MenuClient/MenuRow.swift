import Foundation

/// One row of the flat table as `GET /rows` sends it: a group or a row of the menu at `index`.
///
/// Groups carry `isExpanded`, `childCount` and `visibleDescendantCount` (the rows a collapse would
/// remove now, 0 when collapsed); rows have them nil. `attributes` is nil when the config gives
/// none. A row handed out by ``MenuTable`` has the `index` it has in the table now. `level`,
/// `posInSet` and `setSize` place it for a screen reader (`aria-level`, `aria-posinset`,
/// `aria-setsize`; in a filtered tree, among the rows shown); nil only from a server older than
/// them.
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
    /// Set while the node is not available (sold out, paused: the server's admin API).
    public var availability: MenuRowAvailability?
    /// The row's level, from 1 at the top (`depth` + 1).
    public var level: Int?
    /// Its place among its parent's children, from 1, and their number.
    public var posInSet: Int?
    public var setSize: Int?
    /// A leaf's place in the session's selection; nil for a group (and from a server older than
    /// selection).
    public var selected: Bool?
    /// A group's checkbox: every leaf under it selected, some, or none (`aria-checked` true,
    /// mixed, false); nil for a leaf.
    public var selection: MenuGroupSelection?
    /// A group's selected leaves, at any depth, and those that can be selected now.
    public var selectedCount: Int?
    public var selectableCount: Int?

    public init(
        index: Int, id: String, title: String, depth: Int, parentId: String?, isGroup: Bool, isExpanded: Bool? = nil,
        childCount: Int? = nil, attributes: [String: MenuJSONValue]? = nil, visibleDescendantCount: Int? = nil,
        availability: MenuRowAvailability? = nil, level: Int? = nil, posInSet: Int? = nil, setSize: Int? = nil,
        selected: Bool? = nil, selection: MenuGroupSelection? = nil, selectedCount: Int? = nil,
        selectableCount: Int? = nil
    ) {
        self.selected = selected
        self.selection = selection
        self.selectedCount = selectedCount
        self.selectableCount = selectableCount
        self.index = index
        self.level = level
        self.posInSet = posInSet
        self.setSize = setSize
        self.id = id
        self.title = title
        self.depth = depth
        self.parentId = parentId
        self.isGroup = isGroup
        self.isExpanded = isExpanded
        self.childCount = childCount
        self.attributes = attributes
        self.visibleDescendantCount = visibleDescendantCount
        self.availability = availability
    }

    private enum CodingKeys: String, CodingKey {
        case index, level, posInSet, setSize, id, title, depth, parentId, isGroup, isExpanded, childCount, attributes
        case visibleDescendantCount, availability, selected, selection, selectedCount, selectableCount
    }

    /// As the server writes it: `parentId` always present (`null` at the top), the group fields
    /// only on groups, `attributes` only when there are some, the placement when it was given.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
        try container.encodeIfPresent(level, forKey: .level)
        try container.encodeIfPresent(posInSet, forKey: .posInSet)
        try container.encodeIfPresent(setSize, forKey: .setSize)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(depth, forKey: .depth)
        try container.encode(parentId, forKey: .parentId)
        try container.encode(isGroup, forKey: .isGroup)
        try container.encodeIfPresent(isExpanded, forKey: .isExpanded)
        try container.encodeIfPresent(childCount, forKey: .childCount)
        try container.encodeIfPresent(attributes, forKey: .attributes)
        try container.encodeIfPresent(availability, forKey: .availability)
        try container.encodeIfPresent(selection, forKey: .selection)
        try container.encodeIfPresent(selectedCount, forKey: .selectedCount)
        try container.encodeIfPresent(selectableCount, forKey: .selectableCount)
        try container.encodeIfPresent(visibleDescendantCount, forKey: .visibleDescendantCount)
        try container.encodeIfPresent(selected, forKey: .selected)
    }
}

/// A group's checkbox as the server computes it from the whole tree: `none`, `some` (a screen
/// reader's `mixed`) or `all` of its selectable leaves selected.
public enum MenuGroupSelection: String, Sendable, Hashable, Codable {
    case none, some, all
}

/// Why a row cannot be ordered now, as the server shows it: its state, when that ends by itself,
/// a reason, and where it comes from (a group above it, or computed for a group whose rows all
/// show one).
public struct MenuRowAvailability: Sendable, Hashable, Codable {
    public var state: MenuAvailabilityState
    /// RFC 3339 (UTC), as sent; ``untilDate`` reads it.
    public var until: String?
    public var reason: String?
    /// The group above whose entry this row shows.
    public var from: String?
    /// True on a group whose rows all show one.
    public var computed: Bool?

    public init(
        state: MenuAvailabilityState, until: String? = nil, reason: String? = nil, from: String? = nil,
        computed: Bool? = nil
    ) {
        self.state = state
        self.until = until
        self.reason = reason
        self.from = from
        self.computed = computed
    }

    /// ``until`` as a date (nil without one, or when it is not RFC 3339).
    public var untilDate: Date? {
        guard let until else { return nil }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: until) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: until)
    }
}

/// A node's state when it is not available; a state this client does not know yet is kept as sent.
public struct MenuAvailabilityState: RawRepresentable, Sendable, Hashable, Codable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public static let soldOut = MenuAvailabilityState(rawValue: "sold_out")
    public static let paused = MenuAvailabilityState(rawValue: "paused")
    /// Outside the node's opening hours; `until` is when it opens.
    public static let closed = MenuAvailabilityState(rawValue: "closed")
}
