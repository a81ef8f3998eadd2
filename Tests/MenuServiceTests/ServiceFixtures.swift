import Foundation
import HTTPCore
import HTTPServer
import MenuModel
@testable import MenuApp
@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

/// The repository's `Config/` directory.
let configDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Config")

let repositoryRoot = configDirectory.deletingLastPathComponent()

func sichuanMenu() throws -> Menu {
    try Menu(contentsOfFile: configDirectory.appendingPathComponent("menu.json").path)
}

func makeService(maxLimit: Int = 500, maxSessions: Int = 1_000) throws -> MenuService {
    let menu = try sichuanMenu()
    return MenuService(menu: menu, store: InMemorySessionStore(menu: menu, maxSessions: maxSessions), maxLimit: maxLimit)
}

extension MenuService {
    func call(_ method: String, _ path: String, query: [(String, String?)] = [], session: String? = nil,
              body: String? = nil) -> HTTPResponse {
        var headers: [(name: String, value: String)] = []
        if let session { headers.append(("x-session-id", session)) }
        return respond(to: HTTPRequest(method: method, path: path, query: query.map { (name: $0.0, value: $0.1) },
                                       headers: headers, body: body.map { Array($0.utf8) } ?? []))
    }
}

extension HTTPResponse {
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }
    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
}
