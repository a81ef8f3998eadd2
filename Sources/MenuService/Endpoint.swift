import HTTPCore

/// One operation of the HTTP contract, with the id its path names where it names one. `HEAD`
/// shares the endpoint of its `GET`.
///
/// Invariant: ``routes`` has exactly one route building each case (`EndpointTests` checks it),
/// and an id is never empty (a path with an empty id segment matches no route).
package enum Endpoint: Hashable, Sendable {
    /// `GET`/`HEAD /rows`: a page of the flattened table.
    case rows
    /// `GET`/`HEAD /count`: the table's row and leaf counts.
    case count
    /// `GET`/`HEAD /menu`: the menu's title, locales, version, counts and attribute types.
    case menu
    /// `GET`/`HEAD /search`: the nodes matching a query and filters, with where the session shows them.
    case search
    /// `GET`/`HEAD /changes`: the session's splices since a revision.
    case changes
    /// `GET`/`HEAD /healthz`: liveness (the process answers; never touches the store).
    case health
    /// `GET`/`HEAD /readyz`: readiness (the session store can serve; 503 while it cannot).
    case readiness
    /// `POST /sessions`.
    case createSession
    /// `GET`/`HEAD /session`: the expansion by id (portable) of the session `X-Session-Id` names.
    case session
    /// `DELETE /session`: ends the session `X-Session-Id` names.
    case deleteSession
    /// `POST /groups/{id}/toggle`.
    case toggleGroup(id: String)
    /// `PUT /groups/{id}/expansion`.
    case setGroupExpansion(id: String)
    /// `PUT /expansion`: expand all, collapse all, or back to the config's defaults.
    case setAllExpansion
    /// `GET`/`HEAD /nodes/{id}`: where a node is (its row, index and ancestors).
    case node(id: String)
    /// `POST /nodes/{id}/reveal`.
    case revealNode(id: String)
    /// `PUT /nodes/{id}/selection`: selects or clears a leaf, or every leaf under a group.
    case selectNode(id: String)
    /// `PUT /selection`: selects or clears every leaf.
    case setAllSelection
    /// `GET`/`HEAD /selection`: the session's selection, compact and as a page of ids, with the
    /// rules it breaks.
    case selection
    /// `GET`/`HEAD /metrics`: the Prometheus text exposition (404 when served on its own listener).
    case metrics
    /// `GET`/`HEAD /`: the browser page.
    case webPage
    /// `GET`/`HEAD /app.js`: the page's script.
    case webScript
    /// `GET`/`HEAD /app.css`: the page's style sheet.
    case webStyle

    /// Every route the service answers, in the order a client reads them (the 404 hint) and with
    /// its methods in the order of its `Allow`: the single source of routing, the unknown-parameter
    /// refusal, the 404 hint, and the contract `openapi.yaml` documents (tests keep them in step).
    package static let routes: [Route] = [
        Route(
            ["GET", "HEAD"], "/rows",
            query: ["offset", "limit", "after", "before", "around", "lang", "q", "filter", "at", "ancestors"],
            .rows),
        Route(["GET", "HEAD"], "/count", query: ["lang", "q", "filter", "at"], .count),
        Route(["GET", "HEAD"], "/menu", query: ["lang"], .menu),
        Route(["GET", "HEAD"], "/search", query: ["q", "filter", "offset", "limit", "lang", "at"], .search),
        Route(["GET", "HEAD"], "/changes", query: ["since", "wait", "lang", "availabilitySince"], .changes),
        Route(["GET", "HEAD"], "/healthz", .health),
        Route(["GET", "HEAD"], "/readyz", .readiness),
        Route(["POST"], "/sessions", .createSession),
        Route(["GET", "HEAD"], "/session", query: ["lang"], .session),
        Route(["DELETE"], "/session", .deleteSession),
        Route(["POST"], "/groups/{id}/toggle", Endpoint.toggleGroup(id:)),
        Route(["PUT"], "/groups/{id}/expansion", Endpoint.setGroupExpansion(id:)),
        Route(["PUT"], "/expansion", .setAllExpansion),
        Route(["GET", "HEAD"], "/nodes/{id}", query: ["lang", "at"], Endpoint.node(id:)),
        Route(["POST"], "/nodes/{id}/reveal", Endpoint.revealNode(id:)),
        Route(["PUT"], "/nodes/{id}/selection", Endpoint.selectNode(id:)),
        Route(["GET", "HEAD"], "/selection", query: ["offset", "limit"], .selection),
        Route(["PUT"], "/selection", .setAllSelection),
        Route(["GET", "HEAD"], "/metrics", .metrics),
        Route(["GET", "HEAD"], WebAsset.page.path, .webPage),
        Route(["GET", "HEAD"], WebAsset.script.path, .webScript),
        Route(["GET", "HEAD"], WebAsset.style.path, .webStyle)
    ]

    /// Every route as a client reads it, built from ``routes`` once: `GET or HEAD /rows, …, PUT
    /// /groups/{id}/expansion` (the hint of a 404).
    static let routeList: String = routes.map { $0.methods.joined(separator: " or ") + " " + $0.template }
        .joined(separator: ", ")

    /// Each template without a parameter with its route (an index into ``routes``) and the
    /// endpoint it is: compared by bytes before the path becomes a `String`. A short string, an
    /// index and a case without payload per entry: the loop over it touches no route.
    private static let fixedTemplates: [(template: String, route: Int, endpoint: Endpoint)] = routes.indices.compactMap
    { index in
        guard case .fixed(let endpoint) = routes[index].builds else { return nil }
        return (routes[index].template, index, endpoint)
    }

    /// The routes with an `{id}` (an index into ``routes``), matched by bytes once no fixed
    /// template matched: the template's bytes before the id and after it (`/groups/`, `/toggle`).
    private static let parameterizedTemplates: [(route: Int, prefix: [UInt8], suffix: [UInt8])] = routes.indices
        .compactMap { index in
            guard let idSegment = routes[index].idSegment else { return nil }
            let segments = routes[index].segments
            let prefix = segments[..<idSegment].map { "/" + $0 }.joined() + "/"
            let suffix = segments[(idSegment + 1)...].map { "/" + $0 }.joined()
            return (index, Array(prefix.utf8), Array(suffix.utf8))
        }

    /// For each route, the methods of every route with its template, in table order: the `Allow`
    /// of a 405 on that path (`GET, HEAD, DELETE` for `/session`, two routes in the table).
    private static let allowed: [[String]] = routes.map { route in
        routes.filter { $0.template == route.template }.flatMap(\.methods)
    }

    /// For each route, whether a later route has the same template (another method of that path):
    /// a path match on it stands only when it takes the method.
    private static let sharesTemplateWithLater: [Bool] = routes.indices.map { index in
        routes[(index + 1)...].contains { $0.template == routes[index].template }
    }

    /// The endpoint `request` asks for: its path picks the route (404 `not_found` when none; of
    /// routes with one template, the one taking the method), its method must be one the route
    /// takes (405 `method_not_allowed` with the methods of the path's routes) and each query
    /// parameter one the route takes (400 `invalid_parameter`), in that order.
    ///
    /// Cost: a fixed path (`/rows`) is a few byte compares against the fixed templates and makes
    /// no `String` and no allocation; a path with an id is compared by bytes with the templates
    /// around their `{id}` and makes only the id's `String`.
    init(routing request: HTTPRequest) throws(APIError) {
        var route = -1
        try self.init(routing: request, route: &route)
    }

    /// ``init(routing:)``, also setting `route` to the index in ``routes`` of the route the path
    /// matched (before the method and query are checked), or leaving it when none did: what a
    /// metric or a log line names a request by (a template, never the id a path carries).
    init(routing request: HTTPRequest, route: inout Int) throws(APIError) {
        let (matched, endpoint) = try Self.route(of: request)
        route = matched
        try Self.routes[matched].admit(request, allowed: Self.allowed[matched])
        self = endpoint
    }

    /// The methods of every route whose template `request`'s path is, whatever the request's own
    /// method (a CORS preflight asks about another method than its own), in the order of `Allow`;
    /// 404 `not_found` when no route's template is the path.
    package static func methods(forPathOf request: HTTPRequest) throws(APIError) -> [String] {
        allowed[try route(of: request).0]
    }

    /// The prefix of `/sessions/{id}`, the form of the session routes with the id in the URL: any
    /// path under it is answered 404 `moved` (``APIError/sessionInPath``), never served, its id
    /// never echoed.
    static let sessionPathPrefix = "/sessions/"

    /// The index in ``routes`` of the route whose template `request`'s path is, and the endpoint it
    /// builds from the path.
    ///
    /// A path with an id matches a template when it is the template's bytes before the id, a
    /// non-empty id without `/`, and the template's bytes after it: the segments of the template,
    /// compared byte for byte, with no `String` made but the id's.
    private static func route(of request: HTTPRequest) throws(APIError) -> (Int, Endpoint) {
        for (template, route, endpoint) in fixedTemplates where request.path(is: template) && takes(request, route) {
            return (route, endpoint)
        }
        let matched = request.withPathBytes { path -> (route: Int, id: String)? in
            for (route, prefix, suffix) in parameterizedTemplates where takes(request, route) {
                if let id = idRange(of: path, between: prefix, and: suffix) {
                    return (route, String(decoding: path[id], as: UTF8.self))
                }
            }
            return nil
        }
        if let (route, id) = matched, case .fromID(let build) = routes[route].builds { return (route, build(id)) }
        let path = request.path
        if path.utf8.starts(with: sessionPathPrefix.utf8), path.utf8.count > sessionPathPrefix.utf8.count {
            throw .sessionInPath
        }
        throw .notFound(path: String(path.prefix(200)))
    }

    /// Where the id is in `path` when `path` is `prefix`, a non-empty id without `/`, then
    /// `suffix`; nil otherwise.
    private static func idRange(of path: UnsafeRawBufferPointer, between prefix: [UInt8], and suffix: [UInt8])
        -> Range<Int>?
    {
        guard path.count > prefix.count + suffix.count,
            path.starts(with: prefix),
            path[(path.count - suffix.count)...].elementsEqual(suffix)
        else { return nil }
        let id = prefix.count ..< path.count - suffix.count
        return path[id].contains(UInt8(ascii: "/")) ? nil : id
    }

    /// Whether the route at `index`, whose template `request`'s path matches, is the one to
    /// answer it: it takes the method, or no later route has its template (then it answers 405).
    private static func takes(_ request: HTTPRequest, _ index: Int) -> Bool {
        !sharesTemplateWithLater[index] || routes[index].methods.contains(request.method)
    }
}

extension Endpoint {
    /// One path template with the methods that reach it, the query parameters it takes and how
    /// its endpoint is built from the path.
    ///
    /// Invariant: the template starts with `/`; it has no `{id}` segment and builds a fixed
    /// endpoint, or exactly one non-empty-matching `{id}` segment and builds from that id.
    /// Checked when the table is made (a wrong table stops the process at its first request).
    ///
    /// A class, immutable: the request path takes one reference to its route, where a struct of
    /// six stored properties was copied out of the table property by property (`GET /rows?limit=1`
    /// measured 15 ns slower than before this table with a struct, 5 ns faster with the class).
    package final class Route: Sendable {
        /// How a route's endpoint is made from the matched path.
        enum Builder: Sendable {
            case fixed(Endpoint)
            case fromID(@Sendable (String) -> Endpoint)
        }

        /// The methods, in the order of the `Allow` of a 405.
        package let methods: [String]
        /// The path as the contract writes it, e.g. `/groups/{id}/toggle`.
        package let template: String
        /// The query parameters it takes; any other is refused.
        package let query: [StaticString]
        let builds: Builder
        /// The template's segments after the leading `/`, split once.
        let segments: [Substring]
        /// Which of ``segments`` is `{id}`; nil for a fixed template.
        let idSegment: Int?

        convenience init(_ methods: [String], _ template: String, query: [StaticString] = [], _ endpoint: Endpoint) {
            self.init(methods, template, query: query, builds: .fixed(endpoint))
        }

        convenience init(
            _ methods: [String], _ template: String, query: [StaticString] = [],
            _ build: @escaping @Sendable (String) -> Endpoint
        ) {
            self.init(methods, template, query: query, builds: .fromID(build))
        }

        private init(_ methods: [String], _ template: String, query: [StaticString], builds: Builder) {
            precondition(
                template.hasPrefix("/") && !methods.isEmpty, "route \(template) needs a leading / and a method")
            self.methods = methods
            self.template = template
            self.query = query
            self.builds = builds
            let parts = Array(template.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
            let ids = parts.indices.filter { parts[$0] == "{id}" }
            segments = parts
            idSegment = ids.first
            switch builds {
            case .fixed:
                precondition(
                    ids.isEmpty && !template.contains("{"),
                    "route \(template) has a parameter but builds a fixed endpoint")
            case .fromID:
                precondition(ids.count == 1, "route \(template) must have exactly one {id} segment to build from")
            }
        }

        /// Refuses a request whose method this route does not take (405, `allowed`, the methods
        /// of every route of this path, as `Allow`), then one with a query parameter it does not
        /// take: a typo such as `limt` must not silently give the default page.
        func admit(_ request: HTTPRequest, allowed: [String]) throws(APIError) {
            guard methods.contains(request.method) else {
                throw .methodNotAllowed(method: request.method, allowed: allowed)
            }
            let given = request.query
            for position in given.indices where !query.contains(where: { given.name(at: position, equals: $0) }) {
                let names = query.map { "\($0)" }
                let takes =
                    names.count < 2
                    ? names.first ?? "no query parameters"
                    : names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
                throw .invalidParameter(
                    "unknown query parameter \"\(given.name(at: position).prefix(40))\"; \(request.method) \(template) takes \(takes)"
                )
            }
        }
    }
}

extension Endpoint {
    /// Each method of each route with its route, in table order, `HEAD` included: what the tests
    /// that compare the table with `openapi.yaml` and the refusals read.
    package static var methodRoutes: [(method: String, route: Route)] {
        routes.flatMap { route in route.methods.map { (method: $0, route: route) } }
    }
}
