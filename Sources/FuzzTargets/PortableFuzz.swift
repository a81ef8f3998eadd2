// The `portable` fuzz target: the input as a `POST /sessions` body (PortableExpansionBodyParser).
// The parser refuses with `invalid_body` or reads an expansion; what it reads must agree with
// Foundation on the ids where Foundation reads the body too, read back the same from its own JSON
// text, and make a session whose `GET /session` creates a session in the same state.

import Foundation
import HTTPCore
import MenuModel
import MenuService

extension FuzzTarget {
    static func checkPortable(_ bytes: [UInt8]) -> String? {
        let parsed: PortableState
        do {
            parsed = try MenuAPI.parsePortableExpansionBody(bytes)
        } catch {
            return error.code == "invalid_body" && !error.message.isEmpty
                ? nil : "refused as \(error.code), not invalid_body"
        }
        if let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] {
            for (key, isExpanded) in [("expanded", true), ("collapsed", false)] {
                let theirs = object[key] as? [String] ?? []
                let ours = parsed.flips.filter { $0.isExpanded == isExpanded }.map(\.id)
                guard ours == theirs else { return "read \(key) \(ours), Foundation reads \(theirs)" }
            }
            let theirs = (object["selection"] as? [String: Any])?["toggled"] as? [String] ?? []
            guard parsed.selection.toggled == theirs || object["selection"] as? [String: Any] == nil else {
                return "read selection.toggled \(parsed.selection.toggled), Foundation reads \(theirs)"
            }
        }
        let text = portableJSON(parsed)
        guard let again = try? MenuAPI.parsePortableExpansionBody(text), again == parsed else {
            return "\(parsed) does not read back from \(String(decoding: text, as: UTF8.self))"
        }
        return checkPortableRoundTrip(bytes)
    }

    /// POST the body, GET the session, POST what GET answered: the second session reads the same.
    /// Both sessions are deleted, so the store never fills.
    private static func checkPortableRoundTrip(_ bytes: [UInt8]) -> String? {
        let created = service.respond(to: HTTPRequest(method: "POST", path: "/sessions", body: bytes))
        if let problem = checkAnswer(created) { return "POST /sessions: \(problem)" }
        guard created.status == 201, let first = created.headers.first(where: { $0.name == "X-Session-Id" })?.value
        else { return nil }
        defer {
            _ = service.respond(to: HTTPRequest(method: "DELETE", path: "/session", headers: [("X-Session-Id", first)]))
        }
        let read = service.respond(to: HTTPRequest(method: "GET", path: "/session", headers: [("X-Session-Id", first)]))
        if let problem = checkAnswer(read) { return "GET /session: \(problem)" }
        guard let answer = (try? JSONSerialization.jsonObject(with: Data(read.body))) as? [String: Any],
            var expansion = answer["expansion"] as? [String: Any], let selection = answer["selection"]
        else { return "GET /session has no expansion or selection object" }
        expansion["selection"] = selection
        guard let body = try? JSONSerialization.data(withJSONObject: expansion) else { return "cannot write the state" }
        let copy = service.respond(to: HTTPRequest(method: "POST", path: "/sessions", body: Array(body)))
        guard copy.status == 201, let second = copy.headers.first(where: { $0.name == "X-Session-Id" })?.value else {
            return
                "the expansion GET answered is refused: \(copy.status) \(String(decoding: copy.body.prefix(200), as: UTF8.self))"
        }
        defer {
            _ = service.respond(
                to: HTTPRequest(method: "DELETE", path: "/session", headers: [("X-Session-Id", second)]))
        }
        let reread = service.respond(
            to: HTTPRequest(method: "GET", path: "/session", headers: [("X-Session-Id", second)]))
        let expansions = [read, reread].map { answer -> NSDictionary? in
            let object = (try? JSONSerialization.jsonObject(with: Data(answer.body))) as? [String: Any]
            return ["expansion": object?["expansion"] ?? NSNull(), "selection": object?["selection"] ?? NSNull()]
        }
        return expansions[0] == expansions[1]
            ? nil
            : "a session made from GET's expansion reads \(String(describing: expansions[1])), not \(String(describing: expansions[0]))"
    }

    /// `expansion` as a body, with Foundation's writer.
    private static func portableJSON(_ expansion: PortableState) -> [UInt8] {
        let object: [String: Any] = [
            "base": expansion.base.rawValue,
            "marks": expansion.marks.map { ["id": $0.id, "mode": $0.mode.rawValue] },
            "expanded": expansion.flips.filter(\.isExpanded).map(\.id),
            "collapsed": expansion.flips.filter { !$0.isExpanded }.map(\.id),
            "selection": ["all": expansion.selection.all, "toggled": expansion.selection.toggled]
        ]
        return Array((try? JSONSerialization.data(withJSONObject: object)) ?? Data())
    }
}
