// The `events` fuzz target: the input's first line as `Accept`, its second as `Last-Event-ID`,
// the rest as the query of `GET /changes` on a session at revision 1, answered through
// `reply(to:route:)` as a server thread would. A stream must open with the `retry:` hint and an
// `open` event whose data is JSON naming an action, then carry a write of the session as a
// `change` event with that revision as its id; anything else is a well-formed answer (never a
// 5xx). Every stream is let go (its connection ended) and none is left held.

import Foundation
import HTTPCore
import MenuService

extension FuzzTarget {
    /// The session the target streams: created once, toggled to revision 1; a write that checks a
    /// stream toggles it on (its revision grows with the inputs that stream).
    private static let eventsSession: String = {
        let created = eventsService.respond(to: HTTPRequest(method: "POST", path: "/groups/h/toggle"))
        return created.headers.first { $0.name == "X-Session-Id" }?.value ?? ""
    }()

    static func checkEvents(_ bytes: [UInt8]) -> String? {
        let session = eventsSession
        let lines = bytes.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        func line(_ index: Int) -> String { index < lines.count ? lines[index] : "" }
        let query = line(2).split(separator: "&").map { pair -> (name: String, value: String?) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : nil)
        }
        var headers = [("X-Session-Id", session), ("Accept", line(0))]
        if lines.count > 1 { headers.append(("Last-Event-ID", line(1))) }
        let request = HTTPRequest(method: "GET", path: "/changes", query: query, headers: headers)
        var route = -1
        let reply = eventsService.reply(to: request, route: &route)
        if case .deferred = reply { eventsService.changeWaits.releaseAll() }  // a long poll answers now
        let response = reply.waitForResponse()
        guard let body = response.streamedBody else {
            if let problem = checkAnswer(response) { return "GET /changes (no stream): \(problem)" }
            return eventsService.changeWaits.figures.open == 0 ? nil : "a waiter is still held"
        }
        defer { body.connectionEnded() }
        guard EventStreamRequest.wantsEventStream(request.headers), response.status == 200 else {
            return "a stream without asking for one, or with status \(response.status)"
        }
        let opened = pending(body)
        guard opened.hasPrefix("retry: "), let open = opened.range(of: "event: open\nid: "),
            let data = opened[open.upperBound...].range(of: "\ndata: "),
            let end = opened[data.upperBound...].range(of: "\n\n"),
            let object = try? JSONSerialization.jsonObject(with: Data(opened[data.upperBound ..< end.lowerBound].utf8))
                as? [String: Any],
            let action = object["action"] as? String, ["none", "apply", "reload"].contains(action),
            let revision = object["revision"] as? Int
        else { return "a stream opened with \(String(reflecting: opened.prefix(300)))" }
        let write = eventsService.respond(
            to: HTTPRequest(method: "POST", path: "/groups/h/toggle", headers: [("X-Session-Id", session)]))
        guard write.status == 200 else { return "the write answered \(write.status)" }
        // The stream looks on a queue of its own: wait (bounded) for the write's event.
        let expected = "event: change\nid: \(revision + 1)\n"
        for _ in 0 ..< 2_000 {
            if pending(body).contains(expected) { return nil }
            usleep(500)
        }
        return "the write's event (\(expected.debugDescription)) never came"
    }

    /// What the stream has written and the server not yet read, read now (as the server would).
    private static func pending(_ body: StreamedBody) -> String {
        var text = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let result = buffer.withUnsafeMutableBytes { body.read(into: $0, park: {}) }
            guard case .bytes(let count) = result else { break }
            text += buffer[..<count]
        }
        return String(decoding: text, as: UTF8.self)
    }
}
