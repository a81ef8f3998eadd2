// libFuzzer entry points for menu-server's parsers. Build and run with scripts/fuzz.
//
// One binary, three targets, chosen by MENU_FUZZ_TARGET:
//   config   – the menu config loader (JSON decoding, validation, error paths); a menu that
//              loads must walk as many rows as it counts, under toggles
//   request  – routing and query-string parsing over a whole request (method, path, query, headers)
//   body     – the PUT /groups/{id}/expansion body parser
// Each input must never crash; the request target also checks that no input produces a 5xx.

#if FUZZING
import Foundation
import HTTPServer
import MenuModel
import MenuService

/// Built once per process: the fuzzers only read it.
let fuzzService: MenuService = {
    let json = Data(#"{"items":[{"id":"g","title":"G","expanded":true,"items":[{"id":"r","title":"R"},{"id":"h","title":"H","items":[]}]}]}"#.utf8)
    let menu = try! Menu(jsonData: json)
    return MenuService(menu: menu, store: InMemorySessionStore(menu: menu, maxSessions: 64))
}()

let fuzzTarget = ProcessInfo.processInfo.environment["MENU_FUZZ_TARGET"] ?? "config"

/// Splits fuzz bytes into request parts on newline bytes: method, path, query pairs, session, body.
func request(from bytes: [UInt8]) -> HTTPRequest {
    let parts = bytes.split(separator: 0x0A, maxSplits: 4, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    func part(_ index: Int) -> String { index < parts.count ? parts[index] : "" }
    let methods = ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"]
    let method = methods.contains(part(0)) ? part(0) : methods[Int(bytes.first ?? 0) % methods.count]
    let query = part(2).split(separator: "&").map { pair -> (name: String, value: String?) in
        let kv = pair.split(separator: "=", maxSplits: 1)
        return (String(kv.first ?? ""), kv.count > 1 ? String(kv[1]) : nil)
    }
    var headers: [(name: String, value: String)] = []
    if !part(3).isEmpty { headers.append(("x-session-id", part(3))) }
    return HTTPRequest(method: method, path: part(1), query: query, headers: headers, body: Array(part(4).utf8))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch fuzzTarget {
    case "request":
        let response = fuzzService.respond(to: request(from: bytes))
        if response.status >= 500 { fatalError("5xx for client input: \(response.status)") }
    case "body":
        _ = try? MenuService.parseExpansionBody(bytes)
    default:
        fuzzConfig(bytes)
    }
    return 0
}

/// A config is refused with problems, never with a broken tree; a menu that loads walks as it
/// counts, before and after its groups are toggled (in an order the input picks).
func fuzzConfig(_ bytes: [UInt8]) {
    let menu: Menu
    do {
        menu = try Menu(jsonData: Data(bytes))
    } catch {
        for problem in error.problems {
            if case .inconsistentStructure = problem.kind { fatalError("the builder broke the tree: \(problem)") }
        }
        return
    }
    var view = FlattenedView(menu: menu)
    let groups = menu.nodes.filter(menu.isGroup)
    for step in 0 ... min(groups.count, 8) {
        let rows = view.visibleNodes(offset: 0, limit: view.count + 1)
        let leaves = rows.count { !menu.isGroup($0.node) }
        guard rows.count == view.count, leaves == view.leafCount else {
            fatalError("walked \(rows.count) rows (\(leaves) leaves), count \(view.count) (\(view.leafCount)) at step \(step)")
        }
        guard step < groups.count else { break }
        let group = groups[Int(bytes[(step * 7) % bytes.count]) % groups.count]
        _ = try? view.toggle(menu.id(of: group))
    }
}
#else
@main
struct MenuFuzz {
    static func main() {
        print("menu-fuzz is a libFuzzer target: build and run it with scripts/fuzz")
    }
}
#endif
