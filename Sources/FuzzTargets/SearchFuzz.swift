// The `search` fuzz target: the input's first line as `q`, each later line as a `filter`, sent to
// `GET /search`, `/rows` and `/count` of a small menu with accented, CJK and searchable-attribute
// texts. Every answer is well formed (never a 5xx; a 400 is `invalid_query`, `invalid_filter` or
// `invalid_parameter`); a search that runs finds exactly the nodes a naive scan with Foundation's
// folding finds, and the filtered tree counts as many rows as `/count` says.

import Foundation
import HTTPCore
import MenuModel
import MenuService
import MenuSessions

extension FuzzTarget {
    /// Café, 麻婆豆腐, Straße, a searchable `en` attribute, booleans and numbers to filter on.
    static let searchService: MenuAPI = {
        let json = #"""
            {"searchable":["en"],"items":[{"id":"d","title":"Drinks","items":[{"id":"c","title":"Café crème","attributes":{"vegan":false,"price":4.5,"en":"Coffee"}},
            {"id":"k","title":"Kölsch","attributes":{"vegan":true,"price":6}}]},{"id":"f","title":"Food","expanded":true,"items":[
            {"id":"m","title":"麻婆豆腐","attributes":{"en":"Mapo Tofu","price":22}},{"id":"s","title":"Straße ＡＢＣ","attributes":{"vegan":true,"note":"x:y"}}]}]}
            """#
        let menu = try! Menu(jsonData: Data(json.utf8))
        return MenuAPI(menu: menu, store: InMemorySessionStore(menu: menu, maxSessions: 8))
    }()

    static func checkSearch(_ bytes: [UInt8]) -> String? {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        var query: [(name: String, value: String?)] = [(name: "q", value: lines[0])]
        query += lines.dropFirst().map { (name: "filter", value: $0) }
        if lines[0] == "-" { query.removeFirst() }  // filters alone
        if query.isEmpty { return nil }  // no search: /rows and /count are the plain tree (the contract tests check it)
        var totals: [Int] = []
        for path in ["/search", "/rows", "/count"] {
            let limit: [(name: String, value: String?)] = path == "/count" ? [] : [(name: "limit", value: "500")]
            let response = searchService.respond(to: HTTPRequest(method: "GET", path: path, query: query + limit))
            if let problem = checkAnswer(response) { return "\(path): \(problem)" }
            let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
            if response.status == 400 {
                let code = (object["error"] as? [String: Any])?["code"] as? String ?? ""
                guard ["invalid_query", "invalid_filter", "invalid_parameter"].contains(code) else {
                    return "\(path): 400 \(code)"
                }
                continue
            }
            guard response.status == 200 else { return "\(path): status \(response.status)" }
            totals.append((object["total"] ?? object["count"]) as? Int ?? -1)
            if path == "/rows", (object["rows"] as? [Any])?.count != object["count"] as? Int {
                return "/rows: rows and count differ"
            }
        }
        guard totals.isEmpty || totals.count == 3 else {
            return "/search, /rows and /count disagree on refusing: \(totals)"
        }
        guard totals.count == 3 else { return nil }
        guard totals[1] == totals[2] else { return "/rows counts \(totals[1]) rows, /count \(totals[2])" }
        return checkSearchMatches(
            text: lines[0] == "-" ? nil : lines[0], filters: Array(lines.dropFirst()), total: totals[0])
    }

    /// `total` matches exactly the nodes one of whose texts, folded by Foundation, contains the
    /// folded query, and every filter holds (the naive reference).
    static func checkSearchMatches(text: String?, filters: [String], total: Int) -> String? {
        let menu = searchService.menu
        guard let parsed = try? filters.map({ text throws(SearchQueryError) in try AttributeFilter(parsing: text) }),
            let query = try? SearchQuery(text: text, filters: parsed)
        else { return "the service ran a search the model refuses" }
        let needle = text.map { SearchFolding.foundationFold($0) }
        let naive = menu.nodes.count { node in
            let texts = SearchIndex.searchTexts(of: node, in: menu).map(SearchFolding.foundationFold)
            guard
                needle.map({ needle in texts.contains { Array($0.utf8).firstRange(of: Array(needle.utf8)) != nil } })
                    ?? true
            else { return false }
            return query.filters.allSatisfy { $0.holds(for: menu.attributes(of: node)?[$0.name]) }
        }
        return naive == total ? nil : "found \(total) nodes, a naive scan \(naive)"
    }
}
