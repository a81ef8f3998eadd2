import Foundation
import HTTPTestSupport
import MenuTestSupport

/// One server-sent event as a client reads it: its fields (WHATWG HTML §9.2), or a block of
/// comments only (a heartbeat) with ``isComment`` set.
package struct LiveEvent: Sendable, CustomStringConvertible {
    package var event: String?
    package var id: String?
    package var data: String = ""
    package var retry: Int?
    package var isComment = false

    /// `data` as JSON.
    package func json() throws -> LiveJSON {
        try JSONDecoder().decode(LiveJSON.self, from: Data(data.utf8))
    }

    package var description: String {
        isComment ? "(comment)" : "event: \(event ?? "-") id: \(id ?? "-") data: \(data)"
    }
}

/// `GET target` with `Accept: text/event-stream` on a connection of its own, read event by event
/// as the chunks arrive. Blocking, with a receive timeout (a bound for a test gone wrong); one
/// thread at a time.
package final class LiveEventStream {
    private let raw: RawHTTPConnection
    private var text = ""
    private var ended = false
    /// The response's status line and headers (its body, for a refusal).
    package private(set) var head: RawHTTPResponse

    package init(port: Int, _ target: String, headers: [(String, String)] = [], receiveTimeoutSeconds: Int = 30)
        throws
    {
        raw = try RawHTTPConnection(port: port, receiveTimeoutSeconds: receiveTimeoutSeconds)
        try raw.sendRequest("GET", target, headers: [("Accept", "text/event-stream")] + headers)
        head = try raw.readResponseHead()
        if head.status != 200 || head.header("Content-Type") != "text/event-stream" {
            if let length = head.header("Content-Length").flatMap(Int.init), length > 0 {
                head.body = try raw.readResponseBody(length: length)
            }
            ended = true
        }
    }

    /// The next event, heartbeats included; nil once the stream has ended (its last chunk read).
    package func next() throws -> LiveEvent? {
        while true {
            if let end = text.range(of: "\n\n") {
                let block = String(text[..<end.lowerBound])
                text.removeSubrange(..<end.upperBound)
                return Self.event(block)
            }
            if ended { return nil }
            guard let chunk = try raw.readChunk() else {
                ended = true
                continue
            }
            text += String(decoding: chunk, as: UTF8.self)
        }
    }

    /// The next event that is not a heartbeat.
    package func nextEvent() throws -> LiveEvent? {
        while let event = try next() {
            if !event.isComment { return event }
        }
        return nil
    }

    private static func event(_ block: String) -> LiveEvent {
        var event = LiveEvent()
        var data: [String] = []
        var fields = 0
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") { continue }
            fields += 1
            let (name, value) =
                line.firstIndex(of: ":").map {
                    (String(line[..<$0]), String(line[line.index(after: $0)...]).drop { $0 == " " })
                } ?? (String(line), "")
            switch name {
            case "event": event.event = String(value)
            case "id": event.id = String(value)
            case "data": data.append(String(value))
            case "retry": event.retry = Int(value)
            default: break
            }
        }
        event.data = data.joined(separator: "\n")
        event.isComment = fields == 0
        return event
    }
}
