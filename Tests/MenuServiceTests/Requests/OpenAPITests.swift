import Foundation
import MenuTestSupport
import Testing

@testable import MenuService
@testable import MenuSessions

/// `openapi.yaml` documents exactly the routes the service answers.
@Suite struct OpenAPITests {
    /// (method, path) pairs under `paths:`: path keys at two spaces, methods at four.
    static func documentedRoutes() throws -> Set<String> {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        var routes = Set<String>()
        var inPaths = false
        var currentPath: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("paths:") {
                inPaths = true
                continue
            }
            guard inPaths else { continue }
            if let first = line.first, first != " ", first != "#" { break }  // next top-level key
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                currentPath = String(line.dropFirst(2).dropLast())
            } else if let path = currentPath, line.hasPrefix("    "), !line.hasPrefix("     ") {
                let key = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "head", "post", "put", "delete", "patch", "options"].contains(String(key)) {
                    routes.insert("\(key.uppercased()) \(path)")
                }
            }
        }
        return routes
    }

    @Test func documentIsOpenAPI31() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        #expect(text.contains("openapi: 3.1"))
    }

    @Test func everyServedRouteIsDocumentedAndNoOther() throws {
        let served = Set(
            Endpoint.methodRoutes.filter { $0.method != "HEAD" }.map { "\($0.method) \($0.route.template)" })
        let documented = try Self.documentedRoutes().filter { !$0.hasPrefix("HEAD ") }
        #expect(documented == served)
    }
}
