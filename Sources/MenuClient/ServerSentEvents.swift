/// One server-sent event: its type (`message` when the server named none), data and id.
struct ServerSentEvent: Sendable, Equatable {
    var type: String
    var data: String
    /// The `id:` of this event, or the last one before it (the stream's last event id).
    var lastEventID: String
}

/// Reads `text/event-stream` bytes as they arrive, in pieces cut anywhere, into events, as the
/// WHATWG HTML standard (§9.2.6, "Interpreting an event stream") says: lines end in CR LF, LF or
/// CR; `:` starts a comment; fields `event`, `data` (lines joined with LF), `id` (ignored when it
/// holds NUL) and `retry` (digits only); a blank line dispatches the event, unless it has no data.
///
/// Invariant: `line` holds the bytes of the line being read (no line end), at most
/// ``maxLineBytes``: a longer line is cut there (the server's lines are short; a stream that sends
/// an endless line cannot grow the client without bound). Cost: one pass over each byte.
struct ServerSentEventReader: Sendable {
    /// The longest line kept.
    static let maxLineBytes = 1 << 20
    private var line: [UInt8] = []
    private var lastWasCR = false
    private var type = ""
    private var data: [String] = []
    private var hasData = false
    private(set) var lastEventID = ""
    /// The reconnection delay the server last asked for (`retry:`), in milliseconds.
    private(set) var retryMilliseconds: Int?

    init(lastEventID: String = "") {
        self.lastEventID = lastEventID
    }

    /// The events `bytes` complete, in order.
    mutating func read<Bytes: Sequence>(_ bytes: Bytes) -> [ServerSentEvent] where Bytes.Element == UInt8 {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            switch byte {
            case 0x0A where lastWasCR:
                lastWasCR = false  // the LF of a CR LF: the line ended at the CR
            case 0x0A, 0x0D:
                lastWasCR = byte == 0x0D
                if let event = endLine() { events.append(event) }
            default:
                lastWasCR = false
                if line.count < Self.maxLineBytes { line.append(byte) }
            }
        }
        return events
    }

    /// Ends the current line; the event it dispatches, if any.
    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else { return dispatch() }
        if line[0] == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let name = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { line[line.index(after: $0)...] } ?? []
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        switch name {
        case "event": type = String(decoding: value, as: UTF8.self)
        case "data":
            data.append(String(decoding: value, as: UTF8.self))
            hasData = true
        case "id" where !value.contains(0): lastEventID = String(decoding: value, as: UTF8.self)
        case "retry" where !value.isEmpty && value.count <= 9 && value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }):
            retryMilliseconds = Int(String(decoding: value, as: UTF8.self))
        default: break
        }
        return nil
    }

    /// A blank line: the event gathered so far, when it has data; the buffers are reset.
    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            type = ""
            data = []
            hasData = false
        }
        guard hasData else { return nil }
        return ServerSentEvent(
            type: type.isEmpty ? "message" : type, data: data.joined(separator: "\n"), lastEventID: lastEventID)
    }
}
