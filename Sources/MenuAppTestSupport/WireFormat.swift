// The one decoder of the wire format the tests read: the bodies of `/rows`, `/nodes/{id}`,
// `/count`, `/changes`, a write, `/sessions` and `/sessions/{id}`, and the error shape. It is
// strict where the contract is exact: a row and a page keep the set of keys they were sent with,
// and a row built from an oracle carries the keys the contract gives it, so a key too many or
// too few makes two rows differ instead of being defaulted away.

import MenuModel
import MenuTestSupport
import NaiveReference

/// Any key, for reading which keys an object has.
package struct AnyKey: CodingKey {
    package var stringValue: String
    package var intValue: Int? { nil }
    package init(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { nil }
}

/// One row of `/rows` or of `/nodes/{id}`, with the set of keys it was sent with.
package struct LiveRow: Decodable, Equatable, Sendable, CustomStringConvertible {
    package var keys: Set<String>
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
    package var level: Int
    package var posInSet: Int
    package var setSize: Int
    /// A leaf's selection; nil for a group.
    package var selected: Bool?
    /// A group's selection (`none`, `some`, `all`) and counts; nil for a leaf.
    package var selection: String?
    package var selectedCount: Int?
    package var selectableCount: Int?

    /// The keys of a leaf; `parentId` is always there (null at the top).
    package static let rowKeys: Set<String> = [
        "index", "level", "posInSet", "setSize", "id", "title", "depth", "parentId", "isGroup", "selected"
    ]
    /// A group's keys; `attributes` joins either set when the node has some.
    package static let groupKeys = rowKeys.subtracting(["selected"]).union([
        "isExpanded", "childCount", "visibleDescendantCount", "selection", "selectedCount", "selectableCount"
    ])

    /// The row the contract says the server sends with these fields: a group's fields only on a
    /// group, `attributes` only when the node has some, `parentId` always. The selection is
    /// `selected` for a leaf and `selectedCount` of `selectableCount` for a group (nothing
    /// selected, every leaf selectable, unless given).
    package init(
        index: Int, id: String, title: String, depth: Int, isGroup: Bool, isExpanded: Bool?, childCount: Int?,
        attributes: [String: LiveJSON]?, parentId: String?, visibleDescendantCount: Int?, posInSet: Int,
        setSize: Int, selected: Bool = false, selectedCount: Int = 0, selectableCount: Int? = nil
    ) {
        keys = isGroup ? Self.groupKeys : Self.rowKeys
        if isGroup {
            let selectable = selectableCount ?? 0
            self.selectedCount = selectedCount
            self.selectableCount = selectable
            selection = selectedCount == 0 ? "none" : selectedCount >= selectable ? "all" : "some"
        } else {
            self.selected = selected
        }
        level = depth + 1
        self.posInSet = posInSet
        self.setSize = setSize
        if attributes != nil { keys.insert("attributes") }
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

    package init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: AnyKey.self)
        func key(_ name: String) -> AnyKey { AnyKey(stringValue: name) }
        keys = Set(object.allKeys.map(\.stringValue))
        index = try object.decode(Int.self, forKey: key("index"))
        id = try object.decode(String.self, forKey: key("id"))
        title = try object.decode(String.self, forKey: key("title"))
        depth = try object.decode(Int.self, forKey: key("depth"))
        parentId = try object.decodeIfPresent(String.self, forKey: key("parentId"))
        isGroup = try object.decode(Bool.self, forKey: key("isGroup"))
        isExpanded = try object.decodeIfPresent(Bool.self, forKey: key("isExpanded"))
        childCount = try object.decodeIfPresent(Int.self, forKey: key("childCount"))
        attributes = try object.decodeIfPresent([String: LiveJSON].self, forKey: key("attributes"))
        visibleDescendantCount = try object.decodeIfPresent(Int.self, forKey: key("visibleDescendantCount"))
        level = try object.decode(Int.self, forKey: key("level"))
        posInSet = try object.decode(Int.self, forKey: key("posInSet"))
        setSize = try object.decode(Int.self, forKey: key("setSize"))
        selected = try object.decodeIfPresent(Bool.self, forKey: key("selected"))
        selection = try object.decodeIfPresent(String.self, forKey: key("selection"))
        selectedCount = try object.decodeIfPresent(Int.self, forKey: key("selectedCount"))
        selectableCount = try object.decodeIfPresent(Int.self, forKey: key("selectableCount"))
    }

    package var description: String {
        "\(index) \(id) level \(level) \(posInSet) of \(setSize) depth \(depth) parent \(parentId ?? "-") \(isGroup ? "group \(isExpanded == true ? "open" : "closed") of \(childCount ?? -1), \(visibleDescendantCount ?? -1) visible below" : "row") \(isGroup ? "selected \(selectedCount ?? -1) of \(selectableCount ?? -1) (\(selection ?? "-"))" : "selected \(selected.map(String.init) ?? "-")") keys \(keys.sorted())"
    }
}

extension LiveRow {
    /// The row as the server should send it for `model`.
    package init(_ model: FlattenedRow) {
        self.init(
            index: model.index, id: model.id, title: model.title, depth: model.depth, isGroup: model.isGroup,
            isExpanded: model.isExpanded, childCount: model.childCount,
            attributes: model.attributes?.mapValues(LiveJSON.init), parentId: model.parentID,
            visibleDescendantCount: model.visibleDescendantCount, posInSet: model.positionInSet,
            setSize: model.setSize, selected: model.selected ?? false, selectedCount: model.selectedCount ?? 0,
            selectableCount: model.leafCount)
    }

    /// The row as the server should send it for the naive oracle's `row`, with its selection (a
    /// leaf chosen or not, a group's chosen leaves; nothing is unavailable).
    package init(_ row: NaiveRow, selection: (selected: Bool, count: Int) = (false, 0)) {
        self.init(
            index: row.index, id: row.id, title: row.title, depth: row.depth, isGroup: row.isGroup,
            isExpanded: row.isExpanded, childCount: row.childCount,
            attributes: row.attributes?.mapValues(LiveJSON.init), parentId: row.parentID,
            visibleDescendantCount: row.visibleDescendantCount, posInSet: row.positionInSet, setSize: row.setSize,
            selected: selection.selected, selectedCount: selection.count, selectableCount: row.leafCount)
    }
}

/// A page of `GET /rows`, with its keys.
package struct LiveRowsPage: Decodable, Sendable {
    package var keys: Set<String>
    package var version: String
    package var revision: Int
    package var count: Int
    package var leafCount: Int
    package var offset: Int
    package var limit: Int
    package var rows: [LiveRow]

    package static let pageKeys: Set<String> = ["version", "revision", "count", "leafCount", "offset", "limit", "rows"]

    package init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: AnyKey.self)
        func key(_ name: String) -> AnyKey { AnyKey(stringValue: name) }
        keys = Set(object.allKeys.map(\.stringValue))
        version = try object.decode(String.self, forKey: key("version"))
        revision = try object.decode(Int.self, forKey: key("revision"))
        count = try object.decode(Int.self, forKey: key("count"))
        leafCount = try object.decode(Int.self, forKey: key("leafCount"))
        offset = try object.decode(Int.self, forKey: key("offset"))
        limit = try object.decode(Int.self, forKey: key("limit"))
        rows = try object.decode([LiveRow].self, forKey: key("rows"))
    }
}

/// `GET /nodes/{id}`.
package struct LiveNode: Decodable, Sendable {
    package var version: String
    package var id: String
    package var index: Int?
    package var path: [String]
    package var row: LiveRow?
}

/// `GET /count`.
package struct LiveCount: Decodable, Equatable, Sendable {
    package var version: String
    package var revision: Int
    package var count: Int
    package var leafCount: Int

    package init(version: String, revision: Int, count: Int, leafCount: Int) {
        self.version = version
        self.revision = revision
        self.count = count
        self.leafCount = leafCount
    }
}

/// The splice of a write's answer or of a `/changes` entry.
package struct LiveSplice: Decodable, Equatable, Sendable, CustomStringConvertible {
    package var at: Int
    package var inserted: Int
    package var removed: Int

    package init(at: Int, inserted: Int, removed: Int) {
        self.at = at
        self.inserted = inserted
        self.removed = removed
    }

    package var rowChange: RowChange { RowChange(at: at, inserted: inserted, removed: removed) }
    package var description: String { "{at:\(at), inserted:\(inserted), removed:\(removed)}" }
}

/// The answer of a write to one group: its change object.
package struct LiveChange: Decodable, Sendable {
    package var version: String
    package var revision: Int
    package var sessionId: String
    package var id: String
    package var isExpanded: Bool
    package var index: Int?
    package var count: Int
    package var leafCount: Int
    package var change: LiveSplice?
}

/// The answer of any write: a group's change object, or a reset's (`all` instead of `id`,
/// `isExpanded` and `index`).
package struct LiveWrite: Decodable, Sendable {
    package var version: String
    package var revision: Int
    package var sessionId: String
    package var id: String?
    package var isExpanded: Bool?
    package var index: Int?
    package var all: String?
    package var count: Int
    package var leafCount: Int
    package var change: LiveSplice?
}

/// `GET /changes?since=R`.
package struct LiveChanges: Decodable, Sendable {
    package struct Entry: Decodable, Sendable {
        package var revision: Int
        package var change: LiveSplice?
        /// A menu reload's entry: the new menu's version, its splices and reconfigured rows.
        package var reload: Reload?
    }

    package struct Reload: Decodable, Sendable {
        package var version: String
        package var changes: [LiveSplice]
        package var reconfigured: [Int]
    }

    package var version: String
    package var revision: Int
    package var changes: [Entry]
}

/// `GET /sessions/{id}`: a session's portable expansion.
package struct LivePortable: Decodable, Sendable {
    package struct Mark: Decodable, Equatable, Sendable {
        package var id: String
        package var mode: String

        package init(id: String, mode: String) {
            self.id = id
            self.mode = mode
        }
    }

    package struct Expansion: Decodable, Equatable, Sendable {
        package var base: String
        package var marks: [Mark]
        package var expanded: [String]
        package var collapsed: [String]

        package init(base: String, marks: [Mark], expanded: [String], collapsed: [String]) {
            self.base = base
            self.marks = marks
            self.expanded = expanded
            self.collapsed = collapsed
        }
    }

    package var version: String
    package var sessionId: String
    package var revision: Int
    package var expansion: Expansion
}

/// The one field every answer about a session's state has.
package struct LiveRevision: Decodable, Sendable {
    package var revision: Int
}

/// `POST /sessions`.
package struct LiveSessionBody: Decodable, Sendable {
    package var sessionId: String
}

/// `{"error":{"code","message"}}`.
package struct LiveErrorBody: Decodable, Sendable {
    package struct Detail: Decodable, Sendable {
        package var code: String
        package var message: String
    }
    package var error: Detail
}

/// The keys every CHANGE body has, no more.
package let liveChangeKeys: Set<String> = [
    "version", "revision", "sessionId", "id", "isExpanded", "index", "count", "leafCount", "change"
]
