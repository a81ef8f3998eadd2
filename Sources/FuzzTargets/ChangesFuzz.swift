// The `changes` fuzz target: the input as the query string of `GET /changes` (`since`, `wait`,
// `lang`, `availabilitySince`, anything) on a session at revision 1 with availability at revision 2, answered through `reply(to:route:)` as a server
// thread would. A request that waits (a `wait` of 1 to 60 and nothing after `since`) is released
// by a write of its session, and must then carry that write; every answer is well formed (never a
// 5xx), and no waiter is left held.

import HTTPCore
import MenuService

extension FuzzTarget {
    /// The session the target reads: created once, toggled to revision 1; a write that releases a
    /// long poll toggles it on (its revision grows with the inputs that wait).
    private static let changesSession: String = {
        let created = changesService.respond(to: HTTPRequest(method: "POST", path: "/groups/g/toggle"))
        return created.headers.first { $0.name == "X-Session-Id" }?.value ?? ""
    }()

    static func checkChanges(_ bytes: [UInt8]) -> String? {
        let session = changesSession
        let query = String(decoding: bytes, as: UTF8.self).split(separator: "&", omittingEmptySubsequences: false).map {
            pair -> (name: String, value: String?) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : nil)
        }
        let request = HTTPRequest(
            method: "GET", path: "/changes", query: query, headers: [("X-Session-Id", session)])
        var route = -1
        let reply = changesService.reply(to: request, route: &route)
        let waits = query.contains { $0.name == "wait" }
        let response: HTTPResponse
        switch reply {
        case .response(let now):
            response = now
        case .deferred(let deferred):
            guard waits else { return "a GET /changes without wait waited" }
            guard changesService.changeWaits.figures.open == 1 else {
                return "a long poll waits, but \(changesService.changeWaits.figures.open) waiters are held"
            }
            let write = changesService.respond(
                to: HTTPRequest(method: "POST", path: "/groups/g/toggle", headers: [("X-Session-Id", session)]))
            guard write.status == 200 else { return "the releasing write answered \(write.status)" }
            guard changesService.changeWaits.figures.open == 0 else {
                return "a write of the session left its long poll held"
            }
            response = deferred.waitForResponse()
            guard response.status == 200, response.body.count > 40 else {
                return
                    "a released long poll answered \(response.status): \(String(decoding: response.body, as: UTF8.self))"
            }
        }
        if let problem = checkAnswer(response) {
            return "GET /changes?\(String(decoding: bytes, as: UTF8.self)): \(problem)"
        }
        return changesService.changeWaits.figures.open == 0 ? nil : "a waiter is still held"
    }
}
