import Foundation

/// One node that matched a search: its id and title (in the session's language), whether it is a
/// group, its row `index` in the session's table now (nil while a collapsed group hides it:
/// ``MenuTable/reveal(_:)`` opens the way) and the groups enclosing it, outermost first.
public struct MenuSearchMatch: Sendable, Hashable, Codable {
    /// One enclosing group: its id and title.
    public struct Ancestor: Sendable, Hashable, Codable {
        public var id: String
        public var title: String
        public init(id: String, title: String) {
            self.id = id
            self.title = title
        }
    }

    public var id: String
    public var title: String
    public var isGroup: Bool
    public var index: Int?
    /// The enclosing groups, the top-level one first (empty for a top-level node).
    public var path: [Ancestor]

    public init(id: String, title: String, isGroup: Bool, index: Int?, path: [Ancestor]) {
        self.id = id
        self.title = title
        self.isGroup = isGroup
        self.index = index
        self.path = path
    }

    /// The titles from the top-level group down to this node's own.
    public var titlePath: [String] { path.map(\.title) + [title] }

    /// The path as a person reads it: `Drinks › Beer › Tsingtao`.
    public func pathText(separator: String = " › ") -> String { titlePath.joined(separator: separator) }

    private enum CodingKeys: String, CodingKey { case id, title, isGroup, index, path }
    /// As the server writes it: `index` always present (`null` when hidden).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(isGroup, forKey: .isGroup)
        try container.encode(index, forKey: .index)
        try container.encode(path, forKey: .path)
    }
}

/// `GET /search`: one page of the matches of `query` in menu order, `total` of them in all; the
/// `index`es are of the session's table at `version` and `revision`.
public struct MenuSearchPage: Sendable, Hashable, Codable {
    public var version: String
    public var revision: Int
    /// The text searched for as the server read it; nil for a search by filters alone.
    public var query: String?
    public var total: Int
    public var offset: Int
    public var limit: Int
    public var matches: [MenuSearchMatch]

    public init(
        version: String, revision: Int, query: String?, total: Int, offset: Int, limit: Int, matches: [MenuSearchMatch]
    ) {
        self.version = version
        self.revision = revision
        self.query = query
        self.total = total
        self.offset = offset
        self.limit = limit
        self.matches = matches
    }

    private enum CodingKeys: String, CodingKey { case version, revision, query, total, offset, limit, matches }
    /// As the server writes it: `query` always present (`null` for filters alone).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(revision, forKey: .revision)
        try container.encode(query, forKey: .query)
        try container.encode(total, forKey: .total)
        try container.encode(offset, forKey: .offset)
        try container.encode(limit, forKey: .limit)
        try container.encode(matches, forKey: .matches)
    }
}

extension MenuSession {
    /// The nodes whose titles (in any locale; shown in the session's language) or `searchable`
    /// attributes contain `query` (`GET /search?q=`, case-, accent- and width-insensitive), whose
    /// attributes equal every one of `filters` (attribute → value, each sent as
    /// `filter=ATTR:VALUE`, in attribute order), `limit` of them from `offset`, in menu order. An
    /// empty `query` searches by `filters` alone. Sends the session id (creating the session first
    /// when it has none), so each match's `index` is its row in this session's table. The server
    /// refuses a query over 200 characters or neither a query nor a filter (`invalid_query`) and
    /// an attribute no node has (`invalid_filter`).
    public func search(_ query: String, filters: [String: String] = [:], offset: Int = 0, limit: Int = 20)
        async throws(MenuClientError) -> MenuSearchPage
    {
        var parameters = query.isEmpty ? [] : [("q", query)]
        parameters += filters.sorted { $0.key < $1.key }.map { ("filter", $0.key + ":" + $0.value) }
        parameters += [("offset", String(offset)), ("limit", String(limit))]
        let (answer, _) = try await send("GET", "search", query: parameters)
        guard answer.status == 200 else { throw answer.error }
        return try answer.decode(MenuSearchPage.self)
    }
}

extension MenuTable {
    /// ``MenuSession/search(_:filters:offset:limit:)`` of the table's session: the `index`es are
    /// rows of this table when the page's `version` and `revision` are the table's.
    public func search(_ query: String, filters: [String: String] = [:], offset: Int = 0, limit: Int = 20)
        async throws(MenuClientError) -> MenuSearchPage
    {
        try await session.search(query, filters: filters, offset: offset, limit: limit)
    }
}
