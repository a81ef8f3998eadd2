// The `cors` fuzz target: the input's first line as an `Origin` value (and as a `--cors-origin`
// value), its second as `Access-Control-Request-Method`, the rest as `Access-Control-Request-Headers`
// lines. The parsed names must be lowercase tokens without duplicates that parse back to
// themselves; a grant names only the listed origin or `*`; a preflight and a read carrying the
// headers get a well-formed answer (never a 5xx) whose `Access-Control-Allow-Origin` is never
// the input echoed.

import HTTPCore
import MenuModel
import MenuService
import MenuSessions

extension FuzzTarget {
    static let listedOrigin = "http://app.test:3000"

    /// The service of ``service``'s menu with `--cors-origin http://app.test:3000,*`.
    static let corsService: MenuAPI = {
        let menu = service.menu
        return MenuAPI(
            store: InMemorySessionStore(menu: menu, maxSessions: 64),
            crossOriginPolicy: try! CrossOriginPolicy(origins: [listedOrigin, "*"]))
    }()

    static func checkCORS(_ bytes: [UInt8]) -> String? {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        func text(_ line: [UInt8]) -> String { String(decoding: line, as: UTF8.self) }
        let origin = lines.first ?? []
        // A configured origin: refused, or lowercase without a path, and then granted to itself.
        if let policy = try? CrossOriginPolicy(origins: [text(origin)]), let listed = policy.origins.first {
            guard listed == listed.lowercased(), let separator = listed.firstRange(of: "://"),
                !listed[separator.upperBound...].contains("/"), !listed[separator.upperBound...].contains("@")
            else { return "accepted \(listed) as an origin" }
            guard policy.grant(for: Array(listed.utf8)) == .everyMethod(origin: listed) else {
                return "\(listed) is not granted to itself"
            }
        }
        var fields: [(name: String, value: String?)] = [(name: "origin", value: text(origin))]
        if lines.count > 1 { fields.append((name: "access-control-request-method", value: text(lines[1]))) }
        for line in lines.dropFirst(2) { fields.append((name: "access-control-request-headers", value: text(line))) }
        let asked = CrossOriginRequest(headers: HTTPFields(fields))
        for name in asked.requestedHeaders {
            guard name == name.lowercased(), !name.isEmpty,
                CrossOriginRequest.headerNames(in: Array(name.utf8)) == [name]
            else {
                return "requested header \(String(reflecting: name)) is not one lowercase token"
            }
        }
        guard Set(asked.requestedHeaders).count == asked.requestedHeaders.count else {
            return "duplicate requested headers"
        }
        let grant = try! CrossOriginPolicy(origins: [listedOrigin, "*"]).grant(for: asked.origin ?? [])
        guard grant.allowOrigin == "*" || grant.allowOrigin == listedOrigin else {
            return "granted \(String(describing: grant.allowOrigin))"
        }
        let headers = fields.map { (name: $0.name, value: $0.value ?? "") }
        for request in [
            HTTPRequest(method: "OPTIONS", path: "/groups/g/toggle", headers: headers),
            HTTPRequest(method: "OPTIONS", path: "/rows", headers: headers),
            HTTPRequest(method: "GET", path: "/count", headers: headers)
        ] {
            let answer = corsService.respond(to: request)
            if let problem = checkAnswer(answer) { return "\(request.method) \(request.path): \(problem)" }
            let allowed = answer.headers.filter { $0.name == "Access-Control-Allow-Origin" }.map(\.value)
            guard allowed.allSatisfy({ $0 == "*" || $0 == listedOrigin }), allowed.count <= 1 else {
                return "\(request.method) \(request.path) allowed \(allowed)"
            }
            if request.method == "OPTIONS", !allowed.isEmpty {
                let methods = answer.headers.first { $0.name == "Access-Control-Allow-Methods" }?.value ?? ""
                guard let method = asked.requestedMethod,
                    methods.split(separator: ",").map(CrossOriginPolicy.trimmed).contains(method)
                else {
                    return
                        "a preflight granted without its method \(String(describing: asked.requestedMethod)) in \(methods)"
                }
                if allowed == ["*"], method != "GET", method != "HEAD" { return "* granted \(method)" }
            }
        }
        return nil
    }
}
