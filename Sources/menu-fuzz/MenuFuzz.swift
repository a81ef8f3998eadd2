// libFuzzer entry points for menu-server's parsers. Build and run with scripts/fuzz.
//
// One binary, four targets, chosen by MENU_FUZZ_TARGET:
//   config   – the menu config loader (JSON decoding, validation, error paths)
//   request  – routing and query-string parsing over a whole request (method, path, query, headers)
//   body     – the PUT /groups/{id}/expansion body parser
//   forwarded – X-Forwarded-For (its last entry as an IP address) from a trusted proxy; an address
//              found must print and parse back to itself
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
    case "forwarded":
        if let address = HTTPRequest.lastForwardedAddress(in: bytes), IPAddress(address.description) != address {
            fatalError("\(address) does not parse back to itself")
        }
        let proxy = IPAddress(high: 0, low: 0xFFFF_0A00_0001)  // 10.0.0.1
        let request = HTTPRequest(method: "POST", path: "/sessions",
                                  headers: [("X-Forwarded-For", String(decoding: bytes, as: UTF8.self))], peerAddress: proxy)
        if request.clientAddress(trustedProxy: proxy) == nil { fatalError("no client address for a request from the proxy") }
    default:
        _ = try? Menu(jsonData: Data(bytes))
    }
    return 0
}
#else
@main
struct MenuFuzz {
    static func main() {
        print("menu-fuzz is a libFuzzer target: build and run it with scripts/fuzz")
    }
}
#endif
