// The client's reader of `text/event-stream` bytes (WHATWG HTML §9.2.6), fed the same stream cut
// at every byte: line ends of every kind, comments, multi-line data, ids kept from event to event,
// `retry:`, and an event the body ends before its blank line, dropped.

import Testing

@testable import MenuClient

struct ServerSentEventReaderTests {
    static let stream = Array(
        "retry: 2500\r\nevent: open\r\nid: 0\r\ndata: {\"a\":1}\r\n\r\n: heartbeat\n\nevent: change\nid: 1\ndata: x\ndata: y\n\ndata: z\rid: 7\r\rretry: soon\nid\n\ndata:no space\n\ndata: cut off"
            .utf8)
    static let expected = [
        ServerSentEvent(type: "open", data: #"{"a":1}"#, lastEventID: "0"),
        ServerSentEvent(type: "change", data: "x\ny", lastEventID: "1"),
        ServerSentEvent(type: "message", data: "z", lastEventID: "7"),
        ServerSentEvent(type: "message", data: "no space", lastEventID: "")
    ]

    @Test func theEventsAreTheSameWhereverTheBytesAreCut() {
        for cut in 0 ... Self.stream.count {
            var reader = ServerSentEventReader()
            let events = reader.read(Self.stream[..<cut]) + reader.read(Self.stream[cut...])
            #expect(events == Self.expected, "cut at \(cut)")
            #expect(reader.retryMilliseconds == 2_500, "a retry that is not digits is ignored")
        }
    }

    @Test func byteByByteGivesTheSameEvents() {
        var reader = ServerSentEventReader(lastEventID: "41")
        var events: [ServerSentEvent] = []
        for byte in Self.stream { events += reader.read([byte]) }
        #expect(events == Self.expected)
    }

    @Test func anEndlessLineIsCutAtTheLimitInsteadOfGrowingTheClient() {
        var reader = ServerSentEventReader()
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: ServerSentEventReader.maxLineBytes + 10)
        let events = reader.read(Array("data: ".utf8) + long + Array("\n\n".utf8))
        #expect(events.count == 1 && events[0].data.utf8.count == ServerSentEventReader.maxLineBytes - 6)
    }
}
