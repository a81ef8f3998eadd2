// The service's answers decoded strictly for the differential test: every key a row or a page
// carries is kept, so a key too many or too few is a difference, not a default.

import Foundation
import MenuModel
import MenuTestSupport
import NaiveReference

/// Any key, for reading which keys an object has.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// One row of `/rows` or of `/nodes/{id}` with the set of keys it was sent with.
struct ServedRow: Decodable, Equatable, CustomStringConvertible {
    var keys: Set<String>
    var index: Int
    var id: String
    var title: String
    var depth: Int
    var parentId: String?
    var isGroup: Bool
    var isExpanded: Bool?
    var childCount: Int?
    var attributes: [String: LiveJSON]?
    var visibleDescendantCount: Int?

    static let rowKeys: Set<String> = ["index", "id", "title", "depth", "parentId", "isGroup"]
    static let groupKeys = rowKeys.union(["isExpanded", "childCount", "visibleDescendantCount"])

    init(from decoder: any Decoder) throws {
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
    }

    /// The row the contract says the server sends for the oracle's `row`: a group's fields only on
    /// a group, `attributes` only when the node has some, `parentId` always (null at the top).
    init(_ row: NaiveRow) {
        keys = row.isGroup ? Self.groupKeys : Self.rowKeys
        if row.attributes != nil { keys.insert("attributes") }
        index = row.index
        id = row.id
        title = row.title
        depth = row.depth
        parentId = row.parentID
        isGroup = row.isGroup
        isExpanded = row.isExpanded
        childCount = row.childCount
        attributes = row.attributes?.mapValues(LiveJSON.init)
        visibleDescendantCount = row.visibleDescendantCount
    }

    var description: String {
        "\(index) \(id) depth \(depth) parent \(parentId ?? "-") \(isGroup ? "group \(isExpanded == true ? "open" : "closed") of \(childCount ?? -1), \(visibleDescendantCount ?? -1) visible below" : "row") keys \(keys.sorted())"
    }
}

/// A page of `GET /rows` (also its keys).
struct ServedPage: Decodable {
    var keys: Set<String>
    var version: String
    var revision: Int
    var count: Int
    var leafCount: Int
    var offset: Int
    var limit: Int
    var rows: [ServedRow]

    static let pageKeys: Set<String> = ["version", "revision", "count", "leafCount", "offset", "limit", "rows"]

    init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: AnyKey.self)
        func key(_ name: String) -> AnyKey { AnyKey(stringValue: name) }
        keys = Set(object.allKeys.map(\.stringValue))
        version = try object.decode(String.self, forKey: key("version"))
        revision = try object.decode(Int.self, forKey: key("revision"))
        count = try object.decode(Int.self, forKey: key("count"))
        leafCount = try object.decode(Int.self, forKey: key("leafCount"))
        offset = try object.decode(Int.self, forKey: key("offset"))
        limit = try object.decode(Int.self, forKey: key("limit"))
        rows = try object.decode([ServedRow].self, forKey: key("rows"))
    }
}

/// `GET /nodes/{id}`.
struct ServedNode: Decodable {
    var id: String
    var index: Int?
    var path: [String]
    var row: ServedRow?
}

/// The splice of a write's answer or of a `/changes` entry.
struct ServedSplice: Decodable, Equatable {
    var at: Int
    var inserted: Int
    var removed: Int

    var rowChange: RowChange { RowChange(at: at, inserted: inserted, removed: removed) }
}

/// The answer of a write: a group's change object, or a reset's (`all` instead of `id`,
/// `isExpanded` and `index`).
struct ServedWrite: Decodable {
    var version: String
    var revision: Int
    var sessionId: String
    var id: String?
    var isExpanded: Bool?
    var index: Int?
    var all: String?
    var count: Int
    var leafCount: Int
    var change: ServedSplice?
}

/// `GET /changes?since=R`.
struct ServedChanges: Decodable {
    struct Entry: Decodable {
        var revision: Int
        var change: ServedSplice?
    }

    var version: String
    var revision: Int
    var changes: [Entry]
}

/// `GET /count`.
struct ServedCount: Decodable, Equatable {
    var version: String
    var revision: Int
    var count: Int
    var leafCount: Int
}

/// `GET /sessions/{id}`.
struct ServedPortable: Decodable {
    struct Mark: Decodable, Equatable {
        var id: String
        var mode: String
    }

    struct Expansion: Decodable, Equatable {
        var base: String
        var marks: [Mark]
        var expanded: [String]
        var collapsed: [String]
    }

    var version: String
    var sessionId: String
    var revision: Int
    var expansion: Expansion
}
