import Foundation
import MenuAppTestSupport
import Testing

@testable import MenuApp
@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

extension AppTests {
    /// GET /rows sends attribute numbers as the config wrote them, over a real server.
    @Suite("Attributes: numbers reach rows as written")
    struct AttributeNumberTextTests {
        @Test func rowsCarryTheConfigsNumberText() async throws {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "attribute-numbers-\(UUID().uuidString).json")
            try Data(
                #"""
                {"items": [{"id": "r", "title": "R", "attributes":
                  {"max": 18446744073709551615, "price": 1.10, "big": 1E+3, "list": [2.50, -0, 7]}}]}
                """#.utf8
            ).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let server = try LiveServer { $0.configPath = file.path }
            defer { server.shutdown() }
            let response = try await server.client().get("/rows")
            #expect(response.status == 200)
            let body = String(decoding: response.body, as: UTF8.self)
            #expect(
                body.contains(#""attributes":{"big":1E+3,"list":[2.50,-0,7],"max":18446744073709551615,"price":1.10}"#),
                "\(body)")
        }
    }
}
