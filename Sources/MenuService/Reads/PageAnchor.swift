import HTTPCore
import MenuModel

/// Where a page of `GET /rows` starts: at a row number (`offset`), or found by a node (`after`,
/// `before`, `around`), so that a page stays on the rows a client means even when another
/// device's toggle shifted the numbers.
///
/// Invariant: at most one of the four parameters was given (two are refused when parsed); none
/// means offset 0. An anchor's id is as given, not yet looked up. Cost: parsing is one pass over
/// the query; ``page(in:limit:)`` is O(depth · log m) for an anchor (``FlattenedView/index(ofNode:)``).
enum PageAnchor: Equatable {
    case offset(Int)
    /// The rows right after the node.
    case after(id: String)
    /// The rows right before the node, the node not included.
    case before(id: String)
    /// A page with the node in its middle (moved back from the end to stay full).
    case around(id: String)

    /// The parameters that place a page, in the order a refusal names them.
    static let names: [StaticString] = ["offset", "after", "before", "around"]

    /// Reads the one placing parameter `request` gives: 400 `invalid_parameter` for two of them,
    /// for one given twice, for an empty anchor, or for an offset that is not a decimal integer.
    init(of request: HTTPRequest) throws(APIError) {
        let query = request.query
        // The placing parameter given, by its place in `names` (no allocation: this runs on
        // every page request); a second one is refused.
        var found: Int?
        for position in query.indices {
            guard let kind = Self.kind(of: query, at: position), kind != found else { continue }
            if let first = found {
                let (a, b) = (min(first, kind), max(first, kind))
                throw .invalidParameter(
                    "\(Self.names[a]) and \(Self.names[b]) cannot be used together; give at most one of offset, after, before and around"
                )
            }
            found = kind
        }
        switch found {
        case nil, 0:
            self = .offset(try MenuAPI.integerParameter("offset", in: request, default: 0, range: 0 ... Int.max))
        case 1: self = .after(id: try Self.anchorID("after", in: query))
        case 2: self = .before(id: try Self.anchorID("before", in: query))
        default: self = .around(id: try Self.anchorID("around", in: query))
        }
    }

    /// The place in ``names`` of the parameter at `position`, nil for another parameter.
    @inline(__always)
    private static func kind(of query: HTTPFields, at position: Int) -> Int? {
        if query.name(at: position, equals: "offset") { return 0 }
        if query.name(at: position, equals: "after") { return 1 }
        if query.name(at: position, equals: "before") { return 2 }
        if query.name(at: position, equals: "around") { return 3 }
        return nil
    }

    /// The value of the anchor parameter `name`, given once and not empty (cut to 200 characters:
    /// no node id is longer than 128, so a longer one is unknown, and echoing it whole is not useful).
    private static func anchorID(_ name: StaticString, in query: HTTPFields) throws(APIError) -> String {
        let positions = query.indices.filter { query.name(at: $0, equals: name) }
        guard positions.count == 1 else {
            throw .invalidParameter("\(name) given more than once; \(name) must be one node id")
        }
        guard let value = query.value(at: positions[0]), !value.isEmpty else {
            throw .invalidParameter("\(name) must be a node id, got an empty value")
        }
        return String(value.prefix(200))
    }

    /// The page's first row and how many rows it may hold (at most `limit`) in `view`: 404
    /// `unknown_node` for an anchor no node has, 409 `not_visible` (with the node's path) for a hidden one.
    func page(in view: FlattenedView, limit: Int) throws(APIError) -> (offset: Int, rows: Int) {
        try page(menu: view.menu, count: view.count, limit: limit) { node throws(APIError) in
            guard let index = view.index(ofNode: node) else {
                throw .notVisible(id: view.menu.id(of: node), path: view.ancestors(of: node).map(view.menu.id(of:)))
            }
            return index
        }
    }

    /// As ``page(in:limit:)`` in a search's filtered tree: an anchor it does not show is 400
    /// `invalid_parameter` (no expansion or reveal shows it there).
    func page(in view: FilteredView, limit: Int) throws(APIError) -> (offset: Int, rows: Int) {
        try page(menu: view.menu, count: view.count, limit: limit) { node throws(APIError) in
            guard let index = view.index(ofNode: node) else {
                throw .invalidParameter(
                    "\"\(view.menu.id(of: node))\" is not in this search's filtered tree; anchor on a row it shows, or page by offset"
                )
            }
            return index
        }
    }

    /// The page in a view of `count` rows where `index` finds an anchor node's row (or throws).
    private func page(menu: Menu, count: Int, limit: Int, index: (Menu.Node) throws(APIError) -> Int) throws(APIError)
        -> (offset: Int, rows: Int)
    {
        let id: String
        switch self {
        case .offset(let offset): return (offset, limit)
        case .after(let anchor), .before(let anchor), .around(let anchor): id = anchor
        }
        guard let node = menu.node(withID: id) else { throw .unknownNode(id: id) }
        let index = try index(node)
        switch self {
        case .offset, .after: return (index + 1, limit)
        case .before:
            let offset = max(0, index - limit)
            return (offset, index - offset)
        case .around: return (max(0, min(index - limit / 2, count - limit)), limit)
        }
    }
}
