import MenuClient

/// What the browser needs of a table: its rows by position (fetched on demand) and the writes.
/// ``MenuTable`` is the one the app uses; the protocol keeps the screen logic testable without a
/// server. Every write returns the splices it applied, in order, for the window to follow.
public protocol MenuRowSource: AnyObject, Sendable {
    var count: Int { get }
    var leafCount: Int { get }
    var revision: Int { get }
    /// The row at `index` if cached; nil starts its fetch (an event says when it is in).
    func row(at index: Int) -> MenuRow?
    /// Every slot of the cache, nil for rows not fetched (never fetches).
    var cachedRows: [MenuRow?] { get }
    /// The row at `index` if cached (never fetches).
    func cachedRow(at index: Int) -> MenuRow?
    func toggle(_ id: String) async throws(MenuClientError) -> MenuTableUpdate
    func reveal(_ id: String) async throws(MenuClientError) -> MenuTableUpdate
    func setAll(_ mode: MenuExpansionMode) async throws(MenuClientError) -> MenuTableUpdate
    /// Chooses (`true`) or clears the leaf `id`, or every leaf under the group `id`.
    func setSelected(_ id: String, _ selected: Bool) async throws(MenuClientError) -> MenuTableUpdate
    /// The server's matches for `query` (`GET /search`), their `index`es rows of this table.
    func search(_ query: String, filters: [String: String], offset: Int, limit: Int) async throws(MenuClientError)
        -> MenuSearchPage
}

extension MenuTable: MenuRowSource {}
