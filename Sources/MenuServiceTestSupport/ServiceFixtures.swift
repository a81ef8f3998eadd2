import Foundation
import HTTPCore
import MenuService
import MenuSessions
import MenuTestSupport

package func makeService(maxLimit: Int = 500, maxSessions: Int = 1_000) throws -> MenuAPI {
    let menu = try sichuanMenu()
    return MenuAPI(menu: menu, store: InMemorySessionStore(menu: menu, maxSessions: maxSessions), maxLimit: maxLimit)
}

extension MenuAPI {
    package func call(
        _ method: String, _ path: String, query: [(String, String?)] = [], session: String? = nil,
        body: String? = nil
    ) -> HTTPResponse {
        var headers: [(name: String, value: String)] = []
        if let session { headers.append(("x-session-id", session)) }
        return respond(
            to: HTTPRequest(
                method: method, path: path, query: query.map { (name: $0.0, value: $0.1) },
                headers: headers, body: body.map { Array($0.utf8) } ?? []))
    }
}

extension HTTPResponse {
    package var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }
    package var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
