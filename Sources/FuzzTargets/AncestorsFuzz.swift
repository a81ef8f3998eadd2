// The `ancestors` fuzz target: the input as `?ancestors=` of `GET /rows`, at the row its first
// byte picks, in a session's tree and in a filtered one. `true` answers the first row's enclosing
// groups, the top-level one first, each the row the page shows at its index; `false` answers no
// `ancestors`; anything else is a 400 `invalid_parameter`.

import Foundation
import HTTPCore
import MenuService

extension FuzzTarget {
    static func checkAncestors(_ bytes: [UInt8]) -> String? {
        let value = String(decoding: bytes, as: UTF8.self)
        let offset = Int(bytes.first ?? 0) % 6
        for search in [[], [(name: "q", value: Optional("x"))]] as [[(name: String, value: String?)]] {
            let query = search + [(name: "offset", value: "\(offset)"), (name: "ancestors", value: value)]
            let response = service.respond(to: HTTPRequest(method: "GET", path: "/rows", query: query))
            if let problem = checkAnswer(response) { return problem }
            let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
            guard value == "true" || value == "false" else {
                let code = (object["error"] as? [String: Any])?["code"] as? String
                return response.status == 400 && code == "invalid_parameter"
                    ? nil : "ancestors=\(value) got \(response.status) \(code ?? "")"
            }
            guard response.status == 200 else { return "ancestors=\(value) got \(response.status)" }
            guard value == "true" else { return object["ancestors"] == nil ? nil : "ancestors=false answered them" }
            guard let ancestors = object["ancestors"] as? [[String: Any]] else { return "no ancestors array" }
            // The whole page, to find each ancestor's row by its index.
            let all = service.respond(
                to: HTTPRequest(method: "GET", path: "/rows", query: search + [(name: "limit", value: "50")]))
            let rows =
                ((try? JSONSerialization.jsonObject(with: Data(all.body))) as? [String: Any])?["rows"]
                as? [[String: Any]] ?? []
            let first = (object["rows"] as? [[String: Any]])?.first
            var expected: [String] = []
            var parent = first?["parentId"] as? String
            while let id = parent {
                expected.insert(id, at: 0)
                parent = rows.first { $0["id"] as? String == id }?["parentId"] as? String
            }
            guard ancestors.map({ $0["id"] as? String ?? "" }) == expected else {
                return "ancestors \(ancestors.map { $0["id"] ?? "" }) of a row under \(expected)"
            }
            func canonical(_ row: [String: Any]) -> Data? {
                try? JSONSerialization.data(withJSONObject: row, options: .sortedKeys)
            }
            for row in ancestors {
                guard let index = row["index"] as? Int, index < rows.count, canonical(rows[index]) == canonical(row)
                else { return "ancestor \(row["id"] ?? "") is not the row at its index" }
            }
        }
        return nil
    }
}
