// The server's answers as the client decodes them (docs/api.md, openapi.yaml).
// Each type encodes back to the server's exact shape (explicit `null`s included), which is how
// MenuClientTests prove, field by field, that client and server agree.

/// A table splice: at row `at`, `removed` rows went and `inserted` rows came in their place.
/// A toggle has one of the two 0; a recursive set or an expand-all may have both.
public struct MenuSplice: Sendable, Hashable, Codable, CustomStringConvertible {
    public var at: Int
    public var inserted: Int
    public var removed: Int
    public init(at: Int, inserted: Int, removed: Int) {
        self.at = at
        self.inserted = inserted
        self.removed = removed
    }
    public var description: String { "{at \(at), -\(removed), +\(inserted)}" }
}

/// `GET /count`.
public struct MenuCountAnswer: Sendable, Hashable, Codable {
    public var version: String
    public var revision: Int
    public var count: Int
    public var leafCount: Int
    /// The availability revision the answer shows (absent, nil: 0).
    public var availabilityRevision: Int? = nil
    /// RFC 3339: the menu's next opening-hours boundary, when rows may open or close (absent
    /// when no node has hours). The changes feed reports what changes then.
    public var nextChangeAt: String? = nil
}

/// `GET /rows`: one page.
public struct MenuRowsAnswer: Sendable, Hashable, Codable {
    public var version: String
    public var revision: Int
    public var count: Int
    public var leafCount: Int
    public var offset: Int
    public var limit: Int
    public var rows: [MenuRow]
    /// The availability revision the rows show (absent, nil: 0).
    public var availabilityRevision: Int? = nil
    /// RFC 3339: the menu's next opening-hours boundary, when rows may open or close (absent
    /// when no node has hours). The changes feed reports what changes then.
    public var nextChangeAt: String? = nil
}

/// A toggle, a set or a reveal: the node's row `index` after it (nil when hidden) and the splice
/// (nil when the group is hidden).
public struct MenuChangeAnswer: Sendable, Hashable, Codable {
    public var version: String
    public var revision: Int
    public var sessionId: String
    public var id: String
    public var isExpanded: Bool
    public var index: Int?
    public var count: Int
    public var leafCount: Int
    public var change: MenuSplice?

    private enum CodingKeys: String, CodingKey {
        case version, revision, sessionId, id, isExpanded, index, count, leafCount, change
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(revision, forKey: .revision)
        try container.encode(sessionId, forKey: .sessionId)
        try container.encode(id, forKey: .id)
        try container.encode(isExpanded, forKey: .isExpanded)
        try container.encode(index, forKey: .index)
        try container.encode(count, forKey: .count)
        try container.encode(leafCount, forKey: .leafCount)
        try container.encode(change, forKey: .change)
    }
}

/// `PUT /expansion`: the whole table as one splice.
public struct MenuExpandAllAnswer: Sendable, Hashable, Codable {
    public var version: String
    public var revision: Int
    public var sessionId: String
    public var all: MenuExpansionMode
    public var count: Int
    public var leafCount: Int
    public var change: MenuSplice
}

/// What `PUT /expansion` sets every group to.
public enum MenuExpansionMode: String, Sendable, Hashable, Codable {
    case expanded, collapsed
    /// Each group as the menu config says.
    case `default`
}

/// `GET /changes?since=R`: the entries after `R`, oldest first: a write's splice (nil: a hidden
/// group), or a menu reload's splices (``MenuReloadEntry``).
public struct MenuChangesAnswer: Sendable, Hashable, Codable {
    public struct Entry: Sendable, Hashable, Codable {
        public var revision: Int
        public var change: MenuSplice?
        /// Set when the entry is a menu reload.
        public var reload: MenuReloadEntry?
        /// Set when the entry is a selection: rows whose content changed, not their number.
        public var reconfigured: MenuReconfiguredRows?
        private enum CodingKeys: String, CodingKey { case revision, change, reload, reconfigured }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(revision, forKey: .revision)
            if let reload {
                try container.encode(reload, forKey: .reload)
            } else if let reconfigured {
                try container.encode(reconfigured, forKey: .reconfigured)
            } else {
                try container.encode(change, forKey: .change)
            }
        }
    }
    public var version: String
    public var revision: Int
    public var changes: [Entry]
    /// The availability revision now (absent, nil: 0).
    public var availabilityRevision: Int? = nil
    /// With `availabilitySince`, when availability moved since: the rows to fetch again.
    public var availability: MenuAvailabilityChange? = nil
}

/// A change of availability in the changes feed: from revision `since` to `revision`, the rows
/// (positions after the answer's entries) that show something else now; nil rows: every row.
public struct MenuAvailabilityChange: Sendable, Hashable, Codable {
    public var since: Int
    public var revision: Int
    public var reconfigured: [Int]?

    public init(since: Int, revision: Int, reconfigured: [Int]?) {
        self.since = since
        self.revision = revision
        self.reconfigured = reconfigured
    }
}

/// A selection write's answer (`PUT /nodes/{id}/selection`, `PUT /selection`): the node (nil
/// for the whole menu), the state asked for, the leaves selected under it after the write, and
/// the rows it changed.
public struct MenuSelectionChangeAnswer: Sendable, Hashable, Codable {
    public var version: String
    public var revision: Int
    public var sessionId: String
    public var id: String?
    public var selected: Bool
    public var selectedCount: Int
    public var reconfigured: MenuReconfiguredRows
    public var count: Int
    public var leafCount: Int
    /// Always null: a selection moves no row (kept so the answer round-trips).
    public var change: MenuSplice?

    private enum CodingKeys: String, CodingKey {
        case version, revision, sessionId, id, selected, selectedCount, reconfigured, count, leafCount, change
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(revision, forKey: .revision)
        try container.encode(sessionId, forKey: .sessionId)
        try container.encodeIfPresent(id, forKey: .id)
        try container.encode(selected, forKey: .selected)
        try container.encode(selectedCount, forKey: .selectedCount)
        try container.encode(reconfigured, forKey: .reconfigured)
        try container.encode(count, forKey: .count)
        try container.encode(leafCount, forKey: .leafCount)
        try container.encode(change, forKey: .change)
    }
}

/// `GET /selection`: the compact selection (`all`, `toggled`), its counts, a page of the selected
/// leaves' ids in menu order, and the rules it breaks (each violation as the server states it).
public struct MenuSelectionAnswer: Sendable, Hashable, Codable {
    public struct Compact: Sendable, Hashable, Codable {
        public var all: Bool
        public var toggled: [String]
    }
    public var version: String
    public var revision: Int
    public var availabilityRevision: Int?
    public var nextChangeAt: String?
    public var selection: Compact
    public var selectedCount: Int
    public var selectableCount: Int
    public var offset: Int
    public var limit: Int
    public var selected: [String]
    public var violations: [MenuJSONValue]
}

/// What a selection changed: `count` rows from `at` (the node's rows) and the rows of the groups
/// `ancestors` names, wherever they are (their counts). No row moved.
public struct MenuReconfiguredRows: Sendable, Hashable, Codable {
    public var at: Int
    public var count: Int
    public var ancestors: [String]

    public init(at: Int, count: Int, ancestors: [String]) {
        self.at = at
        self.count = count
        self.ancestors = ancestors
    }
}

/// A menu reload in the changes feed: the new menu's `version`; `changes`, the splices that take
/// the session's rows on the old menu to its rows on the new one, applied in order; and
/// `reconfigured`, the rows (positions after the splices) kept but shown differently.
public struct MenuReloadEntry: Sendable, Hashable, Codable {
    public var version: String
    public var changes: [MenuSplice]
    public var reconfigured: [Int]
}

/// `GET /nodes/{id}`: where a node is (`index` and `row` nil when hidden) and its enclosing groups.
public struct MenuNodeAnswer: Sendable, Hashable, Codable {
    public var version: String
    public var id: String
    public var index: Int?
    public var path: [String]
    public var row: MenuRow?

    private enum CodingKeys: String, CodingKey { case version, id, index, path, row }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(id, forKey: .id)
        try container.encode(index, forKey: .index)
        try container.encode(path, forKey: .path)
        try container.encode(row, forKey: .row)
    }
}

/// `POST /sessions`: the new id; `ignored` lists the ids of a sent layout the menu has not as groups.
public struct MenuSessionCreatedAnswer: Sendable, Hashable, Codable {
    public var sessionId: String
    public var revision: Int?
    public var ignored: [String]?
}

/// `GET /session`: the portable state (expansion and selection, by id, not position) of the
/// session `X-Session-Id` names.
public struct MenuSessionStateAnswer: Sendable, Hashable, Codable {
    public var version: String
    public var sessionId: String
    public var revision: Int
    public var expansion: MenuLayout
    /// The portable selection, `{"all", "toggled"}` (nil from a server older than selection).
    public var selection: MenuJSONValue?

    /// What `POST /sessions` takes to make a session in this state: the expansion with the
    /// selection added.
    public var layout: MenuLayout {
        guard let selection, case .object(var members) = expansion.json else { return expansion }
        members["selection"] = selection
        return MenuLayout(json: .object(members))
    }
}

/// A session's layout as the server states it portably (`GET /session`): `base`
/// (`default`, `expanded` or `collapsed`), `marks` (subtrees set by a recursive change) and the
/// groups `expanded` or `collapsed` otherwise, all by group id. Kept as the server sent it and sent back
/// unchanged to `POST /sessions`, so a field the client does not read survives the round trip.
public struct MenuLayout: Sendable, Hashable, Codable {
    public var json: MenuJSONValue
    public init(json: MenuJSONValue) { self.json = json }
    public init(from decoder: any Decoder) throws { json = try MenuJSONValue(from: decoder) }
    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }

    public var base: MenuExpansionMode? { json["base"]?.stringValue.flatMap(MenuExpansionMode.init(rawValue:)) }
    /// The subtrees set to one mode by a recursive change, in menu order.
    public var marks: [(id: String, mode: MenuExpansionMode)] {
        (json["marks"]?.arrayValue ?? []).compactMap { mark in
            guard let id = mark["id"]?.stringValue,
                let mode = mark["mode"]?.stringValue.flatMap(MenuExpansionMode.init(rawValue:))
            else { return nil }
            return (id, mode)
        }
    }
    /// The groups this layout has expanded (beyond `base`).
    public var expandedIDs: [String] { json["expanded"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    /// The groups this layout has collapsed (beyond `base`).
    public var collapsedIDs: [String] { json["collapsed"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
}

/// `{"error":{"code","message"[,"path"]}[,"revision"]}`.
public struct MenuErrorAnswer: Sendable, Hashable, Codable {
    public struct Detail: Sendable, Hashable, Codable {
        public var code: String
        public var message: String
        public var path: [String]?
    }
    public var error: Detail
    public var revision: Int?
}
