import HTTPCore

/// Cross-origin resource sharing (`--cors-origin`): what lets a web app served from another
/// origin call the API from a browser.
///
/// With a ``CrossOriginPolicy`` every answer carries `Vary: Origin`, and an answer to an origin
/// the policy grants the request's method carries `Access-Control-Allow-Origin` and
/// `Access-Control-Expose-Headers: X-Session-Id, ETag`. A preflight (`OPTIONS` with `Origin` and
/// `Access-Control-Request-Method`) on a known path answers `204` with the path's `Allow` (the
/// methods of all its routes: `GET, HEAD, DELETE` for `/session`); when the origin may use the
/// method and every header it asks for, also the `Access-Control-Allow-*` headers. A refused origin, method or header gets the same `204` without them, never an error:
/// the browser then keeps the answer from the page. Without a policy nothing here runs, and
/// `OPTIONS` is `405` as any other method a route does not take.
extension MenuAPI {
    /// The request headers a preflight may ask for, lowercase (the safelisted ones included).
    private static let allowedRequestHeaders: Set<String> = Set(
        CrossOriginPolicy.allowedHeaders.map { $0.lowercased() }
    )
    .union(["accept", "accept-language", "content-language"])
    private static let allowHeadersValue = CrossOriginPolicy.allowedHeaders.joined(separator: ", ")
    private static let exposeHeadersValue = CrossOriginPolicy.exposedHeaders.joined(separator: ", ")

    /// The answer to a preflight on `request`'s path (404 `not_found` for an unknown one).
    func preflight(_ request: HTTPRequest, policy: CrossOriginPolicy) throws(APIError) -> HTTPResponse {
        let pathMethods = try Endpoint.methods(forPathOf: request)
        var headers: [(name: String, value: String)] = [
            ("Allow", pathMethods.joined(separator: ", ")), ("Cache-Control", "no-store"),
            ("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
        ]
        let asked = CrossOriginRequest(headers: request.headers)
        guard !asked.isMalformedPreflight, let origin = asked.origin, let method = asked.requestedMethod else {
            return HTTPResponse(status: 204, headers: headers)
        }
        let grant = policy.grant(for: origin)
        let methods = grant.allowedMethods(of: pathMethods)
        guard let allowOrigin = grant.allowOrigin, methods.contains(method),
            asked.requestedHeaders.allSatisfy(Self.allowedRequestHeaders.contains)
        else { return HTTPResponse(status: 204, headers: headers) }
        headers += [
            ("Access-Control-Allow-Origin", allowOrigin),
            ("Access-Control-Allow-Methods", methods.joined(separator: ", ")),
            ("Access-Control-Allow-Headers", Self.allowHeadersValue),
            ("Access-Control-Max-Age", String(CrossOriginPolicy.preflightMaxAgeSeconds))
        ]
        return HTTPResponse(status: 204, headers: headers)
    }

    /// Adds `Vary: Origin` to `response` (into its `Vary` when it has one), and the allow and
    /// expose headers when `request`'s origin may use its method.
    func addCrossOriginHeaders(to response: inout HTTPResponse, for request: HTTPRequest, policy: CrossOriginPolicy) {
        if let vary = response.headers.firstIndex(where: { $0.name == "Vary" }) {
            if !response.headers[vary].value.contains("Origin") { response.headers[vary].value += ", Origin" }
        } else {
            response.headers.append(("Vary", "Origin"))
        }
        guard request.headers.firstIndex(named: "origin") != nil,
            let origin = CrossOriginRequest(headers: request.headers).origin
        else { return }
        let grant = policy.grant(for: origin)
        guard let allowOrigin = grant.allowOrigin, grant.allowedMethods(of: [request.method]) == [request.method] else {
            return
        }
        response.headers.append(("Access-Control-Allow-Origin", allowOrigin))
        response.headers.append(("Access-Control-Expose-Headers", Self.exposeHeadersValue))
    }
}
