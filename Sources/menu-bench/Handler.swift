import Foundation
import HTTPCore
import HTTPServer
import MenuApp
import MenuModel
import MenuService
import MenuSessions

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `menu-bench --handler FILE`: the service's own cost per request, without a socket or
/// libmicrohttpd: `MenuAPI.respond(to:)` for the request `Benchmarks/http.sh` sends
/// (`GET /rows?offset=count/2&limit=50` on a session with six changed groups) and for a toggle.
/// It shows how much of an HTTP request's CPU time is ours (the rest is the kernel and libmicrohttpd).
/// Also the same page revalidated with the `If-None-Match` of its ETag: the 304 a caching client gets.
enum HandlerFigures {
    /// A service over `menu` with the page `Benchmarks/http.sh` asks for: a session with six
    /// groups toggled, its headers, its row count, and `GET /rows?offset=count/2&limit=50`
    /// (answered once: `page`).
    static func sessionPage(_ menu: Menu) throws -> (
        service: MenuAPI, headers: [(name: String, value: String)], count: Int, rows: HTTPRequest,
        page: HTTPResponse
    ) {
        let service = MenuAPI(menu: menu, store: InMemorySessionStore(menu: menu))
        let created = service.respond(to: HTTPRequest(method: "POST", path: "/sessions"))
        let session =
            String(decoding: created.body, as: UTF8.self)
            .split(separator: "\"").dropFirst(3).first.map(String.init) ?? ""
        let headers = [(name: "Host", value: "127.0.0.1:8080"), (name: "X-Session-Id", value: session)]
        for group in ["g1", "g3", "g14", "g25", "g1112", "g2223"] where menu.node(withID: group) != nil {
            _ = service.respond(to: HTTPRequest(method: "POST", path: "/groups/\(group)/toggle", headers: headers))
        }
        let count = FlattenedView(menu: menu, state: try service.store.state(of: SessionID(session)!)).count
        let rows = HTTPRequest(
            method: "GET", path: "/rows", query: [("offset", String(count / 2)), ("limit", "50")], headers: headers)
        let page = service.respond(to: rows)
        guard page.status == 200 else { throw BenchError.childFailed("GET /rows answered \(page.status)") }
        return (service, headers, count, rows, page)
    }

    static func measure(_ path: String, plan: TimingPlan) throws -> String {
        let (service, headers, count, rows, page) = try sessionPage(try Menu(contentsOfFile: path))
        let tag = page.headers.first { $0.name == "ETag" }?.value ?? ""
        let revalidation = HTTPRequest(
            method: "GET", path: "/rows", query: [("offset", String(count / 2)), ("limit", "50")],
            headers: headers + [(name: "If-None-Match", value: tag)])
        guard service.respond(to: revalidation).status == 304 else {
            throw BenchError.childFailed("the revalidation did not answer 304")
        }
        // The same page with the rows of its first row's groups (a sticky header's "Drinks › Beer").
        let withAncestors = HTTPRequest(
            method: "GET", path: "/rows",
            query: [("offset", String(count / 2)), ("limit", "50"), ("ancestors", "true")], headers: headers)
        let ancestorPage = service.respond(to: withAncestors)
        let ancestorCount =
            ((try? JSONSerialization.jsonObject(with: Data(ancestorPage.body))) as? [String: Any])?["ancestors"]
            as? [Any]
        guard ancestorPage.status == 200, let ancestorCount, !ancestorCount.isEmpty else {
            throw BenchError.childFailed("the page's first row has no ancestors to measure")
        }
        let toggle = HTTPRequest(method: "POST", path: "/groups/g14/toggle", headers: headers)
        let rowsTime = plan.nanosecondsPerOp { _ in service.respond(to: rows).status }
        // The same through the server's request path: route, status and time counted (GET /metrics)
        // and X-Request-Id made; then also a line per request to the access log (written to /dev/null).
        let observed = ObservedService(service: service, metrics: MenuMetrics())
        let observedTime = plan.nanosecondsPerOp { _ in observed.respond(to: rows).status }
        let devNull = open("/dev/null", O_WRONLY)
        defer { close(devNull) }
        let log = ServerLog(format: .text, level: .info, quiet: false, descriptor: devNull)
        let logged = ObservedService(service: service, metrics: MenuMetrics(), log: log)
        var loggedOps = 0
        let loggedTime = plan.nanosecondsPerOp { _ in
            loggedOps += 1
            return logged.respond(to: rows).status
        }
        log.stop()
        let notModifiedTime = plan.nanosecondsPerOp { _ in service.respond(to: revalidation).status }
        let ancestorsTime = plan.nanosecondsPerOp { _ in service.respond(to: withAncestors).status }
        let toggleTime = plan.nanosecondsPerOp { _ in service.respond(to: toggle).status }
        return "| `MenuAPI.respond` GET /rows?offset=\(count / 2)&limit=50 (\(page.body.count) bytes) | "
            + "\(Report.time(rowsTime)) |\n| the same through `ObservedService` (metrics counted, X-Request-Id made) | \(Report.time(observedTime)) |"
            + "\n| the same with the access log (text, to /dev/null; \(log.dropped) of \(loggedOps) lines dropped by the full queue) | \(Report.time(loggedTime)) |"
            + "\n| `MenuAPI.respond` the same with its If-None-Match (304) | \(Report.time(notModifiedTime)) |"
            + "\n| `MenuAPI.respond` the same with `ancestors=true` (\(ancestorCount.count) groups above, \(ancestorPage.body.count) bytes) | \(Report.time(ancestorsTime)) |"
            + "\n| `MenuAPI.respond` POST /groups/g14/toggle | \(Report.time(toggleTime)) |"
    }
}
