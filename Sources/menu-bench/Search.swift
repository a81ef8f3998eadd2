import Foundation
import HTTPCore
import MenuModel
import MenuService
import MenuSessions
import NaiveReference

/// `menu-bench --search`: search on the 1.1k and 1.1M synthetic menus, with CJK added to their
/// Latin titles (`豆腐` on every 7th row, `麻婆豆腐` on every 997th): the index's build time and
/// memory; per query (common and rare, Latin and CJK, none) the scan alone, the filtered view
/// built from nothing (what a cache miss costs), and through `MenuAPI.respond` with the cache
/// warm the first page of `/search` and a 50-row page of `/rows?q=` in the middle of the filtered
/// tree, against the same unfiltered page.
enum SearchFigures {
    /// The synthetic menu with the CJK words in its row titles.
    static func spec(_ size: MenuSize) -> [TreeSpec] {
        func decorate(_ nodes: [TreeSpec]) -> [TreeSpec] {
            nodes.map { node in
                var node = node
                if let children = node.children {
                    node.children = decorate(children)
                } else if let number = Int(node.id.dropFirst()) {
                    if number % 7 == 0 { node.title += " 豆腐" }
                    if number % 997 == 0 { node.title += " 麻婆豆腐" }
                }
                return node
            }
        }
        return decorate(SyntheticMenu.spec(size))
    }

    static func measure(sizes: [MenuSize], plan: TimingPlan) throws -> String {
        var out = ""
        for size in sizes where size != .medium {
            progress("search: \(size.label): generating and loading")
            let menu = try Menu(jsonData: menuJSON(spec(size), title: "Synthetic \(size.label)"))
            let start = Date()
            let index = SearchIndex(menu: menu)
            let build = Date().timeIntervalSince(start)
            progress("search: \(size.label): index built in \(String(format: "%.0f ms", build * 1000))")
            let rare = menu.nodes.filter { !menu.isGroup($0) }[menu.nodeCount * 2 / 3 / 10 * 9]
            let rareLatin = menu.title(of: rare).uppercased().replacingOccurrences(of: "I", with: "Í")
            out +=
                "\(size.label) (\(menu.nodeCount) nodes): index built in \(String(format: "%.0f ms", build * 1000)), "
                + "\(Report.megabytes(index.memoryBytes)) (folded texts and a start per node).\n\n"
                + "| query | matches | shown rows | scan | filtered view, uncached | /search first 20, cached | /rows?q= page of 50, cached | /rows page of 50, unfiltered |\n"
                + "|---|---:|---:|---:|---:|---:|---:|---:|\n"
            let service = MenuAPI(menu: menu, store: InMemorySessionStore(menu: menu))
            for (label, text) in [
                ("Latin, common", "dish"), ("Latin, groups", "group"), ("Latin, rare (accent, case)", rareLatin),
                ("CJK, common", "豆腐"), ("CJK, rare", "麻婆"), ("none", "zzz")
            ] {
                progress("search: \(size.label): \(label)")
                let query = try SearchQuery(text: text)
                let view = try index.view(for: query, in: menu)
                let scan = plan.nanosecondsPerOp { _ in index.matches(folded: query.folded).count }
                let uncached = plan.nanosecondsPerOp { _ in (try? index.view(for: query, in: menu))?.count ?? 0 }
                let middle = String(max(0, view.count / 2 - 25))
                let search = HTTPRequest(method: "GET", path: "/search", query: [(name: "q", value: text)])
                let filtered = HTTPRequest(
                    method: "GET", path: "/rows", query: [(name: "q", value: text), (name: "offset", value: middle)])
                let plain = HTTPRequest(
                    method: "GET", path: "/rows",
                    query: [(name: "offset", value: String(FlattenedView(menu: menu).count / 2))])
                for request in [search, filtered, plain] where service.respond(to: request).status != 200 {
                    throw BenchError.childFailed("\(request.path) answered \(service.respond(to: request).status)")
                }
                let times = [search, filtered, plain].map { request in
                    plan.nanosecondsPerOp { _ in service.respond(to: request).body.count }
                }
                out +=
                    "| \(label): `\(text)` | \(view.matches.count) | \(view.count) | \(Report.time(scan)) | \(Report.time(uncached)) | "
                    + times.map(Report.time).joined(separator: " | ") + " |\n"
            }
            out += "\n"
        }
        return out
    }
}
