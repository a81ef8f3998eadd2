// The `selection` fuzz target: the input as a `PUT /nodes/{id}/selection` body and as a `PUT
// /selection` body. Each parser refuses with `invalid_body` or reads the boolean Foundation reads;
// a body it reads, sent to the service on a group, a leaf and the whole menu, is answered without
// a 5xx, and the selection then read back (`GET /selection`) selects what the write asked for.

import Foundation
import HTTPCore
import MenuService

extension FuzzTarget {
    static func checkSelection(_ bytes: [UInt8]) -> String? {
        let foundation = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
        for (all, key) in [(false, "selected"), (true, "all")] {
            let ours: Bool
            do {
                ours = try MenuAPI.parseSelectionBody(bytes, all: all)
            } catch {
                guard error.code == "invalid_body", !error.message.isEmpty else {
                    return "refused as \(error.code), not invalid_body"
                }
                continue
            }
            if let theirs = foundation?[key] as? Bool, theirs != ours {
                return "read \(key) \(ours), Foundation reads \(theirs)"
            }
            for path in all ? ["/selection"] : ["/nodes/h/selection", "/nodes/r/selection"] {
                let written = service.respond(to: HTTPRequest(method: "PUT", path: path, body: bytes))
                if let problem = checkAnswer(written) { return "PUT \(path): \(problem)" }
                guard written.status == 200,
                    let session = written.headers.first(where: { $0.name == "X-Session-Id" })?.value
                else { return "PUT \(path) with a body the parser reads answered \(written.status)" }
                defer {
                    _ = service.respond(
                        to: HTTPRequest(method: "DELETE", path: "/session", headers: [("X-Session-Id", session)]))
                }
                let read = service.respond(
                    to: HTTPRequest(method: "GET", path: "/selection", headers: [("X-Session-Id", session)]))
                let count =
                    ((try? JSONSerialization.jsonObject(with: Data(read.body))) as? [String: Any])?[
                        "selectedCount"] as? Int
                // g > [r, h > [x]]: r is one leaf, h one, the menu two.
                let expected = ours ? (all ? 2 : 1) : 0
                guard count == expected else { return "PUT \(path) \(ours) then selects \(count ?? -1) leaves" }
            }
        }
        return nil
    }
}
