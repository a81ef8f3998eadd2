import Foundation
import HTTPCore
import MenuServiceTestSupport
import MenuTestSupport
import Testing

@testable import MenuService

/// The routing contract, read from ``Endpoint/routes``: which request reaches which endpoint with
/// which id, and which is 404, 405 or 400, decided before any handler runs.
@Suite struct EndpointTests {
    /// Every request the contract describes, written out, with the endpoint it reaches.
    static let contract: [(method: String, path: String, endpoint: Endpoint)] = [
        ("GET", "/rows", .rows), ("HEAD", "/rows", .rows),
        ("GET", "/count", .count), ("HEAD", "/count", .count), ("GET", "/menu", .menu), ("HEAD", "/menu", .menu),
        ("GET", "/search", .search),
        ("HEAD", "/search", .search),
        ("GET", "/changes", .changes), ("HEAD", "/changes", .changes),
        ("GET", "/healthz", .health), ("HEAD", "/healthz", .health),
        ("GET", "/readyz", .readiness), ("HEAD", "/readyz", .readiness),
        ("POST", "/sessions", .createSession),
        ("GET", "/session", .session), ("HEAD", "/session", .session), ("DELETE", "/session", .deleteSession),
        ("POST", "/groups/main-courses/toggle", .toggleGroup(id: "main-courses")),
        ("POST", "/groups/../toggle", .toggleGroup(id: "..")),
        ("PUT", "/groups/麻婆豆腐 x/expansion", .setGroupExpansion(id: "麻婆豆腐 x")),
        ("PUT", "/expansion", .setAllExpansion),
        ("GET", "/nodes/mapo-tofu", .node(id: "mapo-tofu")), ("HEAD", "/nodes/beer", .node(id: "beer")),
        ("POST", "/nodes/snow-beer/reveal", .revealNode(id: "snow-beer")),
        ("POST", "/nodes/reveal/reveal", .revealNode(id: "reveal")),
        ("PUT", "/nodes/beer/selection", .selectNode(id: "beer")),
        ("PUT", "/nodes/selection/selection", .selectNode(id: "selection")),
        ("GET", "/selection", .selection), ("HEAD", "/selection", .selection), ("PUT", "/selection", .setAllSelection),
        ("GET", "/metrics", .metrics), ("HEAD", "/metrics", .metrics),
        ("GET", "/", .webPage), ("HEAD", "/", .webPage), ("GET", "/app.js", .webScript),
        ("HEAD", "/app.js", .webScript),
        ("GET", "/app.css", .webStyle), ("HEAD", "/app.css", .webStyle)
    ]

    /// Requests refused while routing, written out: a path no route spells is 404 whatever the
    /// method and query; a route's path with another method is 405 before its query is read; a
    /// query parameter the route does not take is 400.
    // Computed, not a stored static: LeakSanitizer cannot see the pointers inside stored static
    // arrays of enums with payloads and reports them as leaked at exit.
    static var refusals: [(method: String, path: String, query: [(name: String, value: String?)], error: APIError)] {
        [
            ("GET", "/rows/", [], .notFound(path: "/rows/")),
            ("GET", "/rows/1", [], .notFound(path: "/rows/1")),
            ("GET", "//rows", [], .notFound(path: "//rows")),
            ("GET", "rows", [], .notFound(path: "rows")),
            ("GET", "/Rows", [], .notFound(path: "/Rows")),
            ("GET", "", [], .notFound(path: "")),
            ("DELETE", "/sessions/", [], .notFound(path: "/sessions/")),
            ("GET", "/session/", [], .notFound(path: "/session/")),
            ("GET", "/Session", [], .notFound(path: "/Session")),
            ("POST", "/groups//toggle", [], .notFound(path: "/groups//toggle")),
            ("POST", "/groups/beer/toggle/", [], .notFound(path: "/groups/beer/toggle/")),
            ("PUT", "/groups/expansion", [], .notFound(path: "/groups/expansion")),
            ("GET", "/nodes/", [], .notFound(path: "/nodes/")),
            ("POST", "/nodes//reveal", [], .notFound(path: "/nodes//reveal")),
            ("GET", "/nodes/beer/reveal", [], .methodNotAllowed(method: "GET", allowed: ["POST"])),
            ("POST", "/nodes/beer", [], .methodNotAllowed(method: "POST", allowed: ["GET", "HEAD"])),
            (
                "GET", "/nodes/beer", [("offset", "1")],
                .invalidParameter(#"unknown query parameter "offset"; GET /nodes/{id} takes lang and at"#)
            ),
            ("GET", "/nope", [("limt", "1")], .notFound(path: "/nope")),
            ("POST", "/rows", [("limt", "1")], .methodNotAllowed(method: "POST", allowed: ["GET", "HEAD"])),
            ("DELETE", "/sessions", [], .methodNotAllowed(method: "DELETE", allowed: ["POST"])),
            ("POST", "/session", [], .methodNotAllowed(method: "POST", allowed: ["GET", "HEAD", "DELETE"])),
            ("PUT", "/session", [], .methodNotAllowed(method: "PUT", allowed: ["GET", "HEAD", "DELETE"])),
            (
                "GET", "/session", [("since", "1")],
                .invalidParameter(#"unknown query parameter "since"; GET /session takes lang"#)
            ),
            (
                "DELETE", "/session", [("id", "AAAAAAAAAAAAAAAAAAAAAA")],
                .invalidParameter(#"unknown query parameter "id"; DELETE /session takes no query parameters"#)
            ),
            // The old form, with the id in the path: 404 `moved` whatever the method and query, the id never echoed.
            ("GET", "/sessions/AAAAAAAAAAAAAAAAAAAAAA", [], .sessionInPath),
            ("HEAD", "/sessions/AAAAAAAAAAAAAAAAAAAAAA", [("lang", "en")], .sessionInPath),
            ("DELETE", "/sessions/not-a-session", [], .sessionInPath),
            ("PUT", "/sessions/x", [("since", "1")], .sessionInPath),
            ("GET", "/sessions/a/b", [], .sessionInPath),
            // A segment ends at a `/` byte even when a combining mark follows it (one Character).
            ("GET", "/sessions/\u{301}AAAAAAAAAAAAAAAAAAAAAA", [], .sessionInPath),
            ("POST", "/groups/beer/\u{301}x/toggle", [], .notFound(path: "/groups/beer/\u{301}x/toggle")),
            ("GET", "/nodes/beer/\u{301}", [], .notFound(path: "/nodes/beer/\u{301}")),
            ("get", "/rows", [], .methodNotAllowed(method: "get", allowed: ["GET", "HEAD"])),
            (
                "HEAD", "/count", [("limit", "1")],
                .invalidParameter(#"unknown query parameter "limit"; HEAD /count takes lang, q, filter and at"#)
            ),
            (
                "GET", "/rows", [("offset", "1"), ("Limit", "2")],
                .invalidParameter(
                    #"unknown query parameter "Limit"; GET /rows takes offset, limit, after, before, around, lang, q, filter, at and ancestors"#
                )
            )
        ]
    }

    static let methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]

    /// `route`'s template with each `{id}` replaced by `id`.
    static func path(of route: Endpoint.Route, id: String = "AAAAAAAAAAAAAAAAAAAAAA") -> String {
        route.template.replacingOccurrences(of: "{id}", with: id)
    }

    static func routing(_ method: String, _ path: String, query: [(name: String, value: String?)] = []) -> Result<
        Endpoint, APIError
    > {
        Result { () throws(APIError) in try Endpoint(routing: HTTPRequest(method: method, path: path, query: query)) }
    }

    /// The case name and id of `endpoint`. No `default`: a new case does not compile until it is
    /// named here, and ``everyEndpointIsBuiltByExactlyOneRoute()`` then fails until a route builds it.
    static func described(_ endpoint: Endpoint) -> (name: String, id: String?) {
        switch endpoint {
        case .rows: ("rows", nil)
        case .count: ("count", nil)
        case .menu: ("menu", nil)
        case .search: ("search", nil)
        case .changes: ("changes", nil)
        case .health: ("health", nil)
        case .readiness: ("readiness", nil)
        case .createSession: ("createSession", nil)
        case .session: ("session", nil)
        case .deleteSession: ("deleteSession", nil)
        case .toggleGroup(let id): ("toggleGroup", id)
        case .setGroupExpansion(let id): ("setGroupExpansion", id)
        case .setAllExpansion: ("setAllExpansion", nil)
        case .node(let id): ("node", id)
        case .revealNode(let id): ("revealNode", id)
        case .selectNode(let id): ("selectNode", id)
        case .setAllSelection: ("setAllSelection", nil)
        case .selection: ("selection", nil)
        case .metrics: ("metrics", nil)
        case .webPage: ("webPage", nil)
        case .webScript: ("webScript", nil)
        case .webStyle: ("webStyle", nil)
        }
    }

    /// The endpoint `route` builds from `id`.
    static func endpoint(of route: Endpoint.Route, id: String) -> Endpoint {
        switch route.builds {
        case .fixed(let endpoint): endpoint
        case .fromID(let build): build(id)
        }
    }

    /// The contract's plain rule, without the fast path: the routes whose template has as many
    /// segments as the path, each equal, and a non-empty one where the template has `{id}` (one
    /// template, or one written on several routes, one per method); of them the one taking the
    /// method (405 with all their methods, in table order, when none does). A path under
    /// `/sessions/` (the old form of the session routes) is 404 `moved`.
    static func reference(_ method: String, _ path: String) -> Result<Endpoint, APIError> {
        if path.utf8.starts(with: "/sessions/".utf8), path != "/sessions/" { return .failure(.sessionInPath) }
        // Segments are bytes between `/` bytes (RFC 3986), not characters: `/` followed by a
        // combining mark still ends a segment.
        let segments = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let matching = Endpoint.routes.filter { route in
            let parts = route.template.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            return parts.count == segments.count
                && zip(parts, segments).allSatisfy {
                    $0.elementsEqual($1) || ($0.elementsEqual("{id}".utf8) && !$1.isEmpty)
                }
        }
        guard let first = matching.first else { return .failure(.notFound(path: path)) }
        guard let route = matching.first(where: { $0.methods.contains(method) }) else {
            return .failure(.methodNotAllowed(method: method, allowed: allowed(at: first.template)))
        }
        let parts = route.template.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let id =
            zip(parts, segments).first { $0.0.elementsEqual("{id}".utf8) }.map { String(decoding: $0.1, as: UTF8.self) }
            ?? ""
        return .success(endpoint(of: route, id: id))
    }

    /// The methods of every route written with `template`, in table order: the `Allow` of its 405.
    static func allowed(at template: String) -> [String] {
        Endpoint.routes.filter { $0.template == template }.flatMap(\.methods)
    }

    /// Each template once, in table order.
    static let templates: [String] = Endpoint.routes.map(\.template).reduce(into: []) {
        if !$0.contains($1) { $0.append($1) }
    }

    /// The paths next to `route`'s: one segment longer, one shorter (for a one-segment path, which
    /// would be `/`, the page, its last segment one byte longer), with a trailing slash, and with an
    /// empty id where it has one.
    static func neighbours(of route: Endpoint.Route) -> [String] {
        let own = path(of: route)
        let shorter = String(own[..<own.lastIndex(of: "/")!])
        var paths = [own + "/extra", shorter.isEmpty ? own + "x" : shorter, own + "/"]
        if route.template.contains("{id}") { paths.append(Self.path(of: route, id: "")) }
        return paths
    }

    @Test(arguments: contract)
    func theRequestTheContractDescribesReachesItsEndpoint(method: String, path: String, endpoint: Endpoint) {
        #expect(Self.routing(method, path) == .success(endpoint))
    }

    @Test func theWrittenContractCoversEveryMethodOfEveryRoute() {
        let written = Set(Self.contract.map { "\($0.method) \(Self.described($0.endpoint).name)" })
        let table = Set(
            Endpoint.methodRoutes.map { "\($0.method) \(Self.described(Self.endpoint(of: $0.route, id: "x")).name)" })
        #expect(written == table)
    }

    @Test(arguments: Endpoint.methodRoutes.map { ($0.method, $0.route.template) })
    func everyRouteReachesTheEndpointItBuildsWithTheIDOfThePath(method: String, template: String) throws {
        let route = try #require(Endpoint.routes.first { $0.template == template && $0.methods.contains(method) })
        for id in ["AAAAAAAAAAAAAAAAAAAAAA", "beer", "%2e%2e", "a b", String(repeating: "é", count: 300)] {
            let reached = try Self.routing(method, Self.path(of: route, id: id)).get()
            #expect(reached == Self.endpoint(of: route, id: id))
            #expect(Self.described(reached).id == (template.contains("{id}") ? id : nil))
        }
    }

    @Test func everyEndpointIsBuiltByExactlyOneRoute() throws {
        let source = try String(
            contentsOf: repositoryRoot.appendingPathComponent("Sources/MenuService/Endpoint.swift"), encoding: .utf8)
        let declared = source.components(separatedBy: "static let routes")[0].split(separator: "\n")
            .filter { $0.hasPrefix("    case ") }.map { String($0.dropFirst(9).prefix { $0.isLetter || $0.isNumber }) }
        let built = Endpoint.routes.map { Self.described(Self.endpoint(of: $0, id: "x")).name }
        #expect(declared.contains("rows") && declared.contains("setGroupExpansion"), "\(declared)")
        #expect(built.sorted() == declared.sorted())
    }

    @Test(arguments: templates)
    func aPathOneSegmentLongerOrShorterWithATrailingSlashOrAnEmptyIDIs404(template: String) throws {
        let route = try #require(Endpoint.routes.first { $0.template == template })
        // `/sessions/extra` is the old form of `/session` (404 `moved`) and `/sessions` is `POST /sessions`: not a `not_found`.
        let strangers = Self.neighbours(of: route).filter { Self.reference("GET", $0) == .failure(.notFound(path: $0)) }
        #expect(strangers.count >= 2, "\(Self.neighbours(of: route))")
        for path in strangers {
            for method in Self.methods {
                #expect(Self.routing(method, path) == .failure(.notFound(path: path)), "\(method) \(path)")
            }
        }
    }

    /// The `Allow` of a path written on several routes lists the methods of all of them.
    @Test(arguments: templates)
    func anotherMethodOnARouteIs405WithTheRoutesMethodsAsAllow(template: String) throws {
        let route = try #require(Endpoint.routes.first { $0.template == template })
        let allowed = Self.allowed(at: template)
        let service = try makeService()
        for method in Self.methods where !allowed.contains(method) {
            #expect(
                Self.routing(method, Self.path(of: route))
                    == .failure(.methodNotAllowed(method: method, allowed: allowed)))
            let response = service.call(method, Self.path(of: route))
            #expect(response.status == 405)
            #expect(response.header("Allow") == allowed.joined(separator: ", "))
        }
    }

    @Test func theAllowOfAReadIsGetThenHead() {
        #expect(
            Self.routing("DELETE", "/rows") == .failure(.methodNotAllowed(method: "DELETE", allowed: ["GET", "HEAD"])))
    }

    @Test(arguments: 0 ..< refusals.count)
    func aRequestNoRouteTakesIsRefusedBeforeAnyHandler(refusal: Int) {
        let (method, path, query, error) = Self.refusals[refusal]
        #expect(Self.routing(method, path, query: query) == .failure(error))
    }

    /// Every path above and its neighbours, with every method: the table's matcher (fixed paths
    /// compared by bytes, the rest by segments) agrees with the plain rule.
    @Test func theFastPathAgreesWithThePlainRule() {
        let paths = Set(
            Self.contract.map(\.path) + Self.refusals.map(\.path) + Endpoint.routes.flatMap(Self.neighbours)
                + ["/", "/groups/beer", "/groups/beer/open", "/sessions/a/b", "/healthz/", "/count%00"])
        for path in paths {
            for method in Self.methods {
                #expect(Self.routing(method, path) == Self.reference(method, path), "\(method) \(path)")
            }
        }
    }
}
