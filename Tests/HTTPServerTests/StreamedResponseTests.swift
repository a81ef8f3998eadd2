import Foundation
import HTTPTestSupport
import Synchronization
import Testing

@testable import HTTPCore
@testable import HTTPServer

/// The bodies the handler opened, in order, for the test to write to from its own thread.
private final class OpenBodies: Sendable {
    private let bodies = Mutex<[StreamedBody]>([])
    func add(_ body: StreamedBody) { bodies.withLock { $0.append(body) } }
    var count: Int { bodies.withLock { $0.count } }
    subscript(index: Int) -> StreamedBody { bodies.withLock { $0[index] } }
}

/// A server whose `/stream` answers a streamed body (kept in `bodies`, `limit` bytes of room) and
/// whose other paths answer `plain <path>` at once.
private func startStreamingServer(
    threads: Int = 2, limit: Int = 1 << 20,
    perIPConnectionLimit: Int = HTTPServerConfiguration().perIPConnectionLimit, _ bodies: OpenBodies
) throws -> HTTPServer {
    try startServer(threads: threads, perIPConnectionLimit: perIPConnectionLimit) { request in
        guard request.path == "/stream" else {
            return HTTPResponse(status: 200, body: Array("plain \(request.path)".utf8))
        }
        let body = StreamedBody(limit: limit)
        bodies.add(body)
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")], stream: body)
    }
}

/// Writes from a thread of the test's own, as a producer does.
private func write(_ text: String, to body: StreamedBody) -> Bool {
    let written = Box<Bool>()
    let done = Signal()
    Thread {
        written.set(body.write(Array(text.utf8)))
        done.fire()
    }.start()
    _ = done.wait(seconds: 10)
    return written.value ?? false
}

/// Waits (bounded) until `condition` holds.
private func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0 ..< 1_000 {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

@Suite("HTTPServer live: a streamed body is sent as it is written, from a socket taken over from libmicrohttpd")
struct StreamedResponseTests {
    @Test func eachWriteArrivesAsAChunkAndTheFinishedStreamClosesTheConnection() throws {
        let bodies = OpenBodies()
        let server = try startStreamingServer(bodies)
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        #expect(try connection.request("GET", "/before").bodyText == "plain /before", "a stream may follow a request")
        try connection.sendText("GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let head = try connection.readResponseHead()
        #expect(head.status == 200 && head.header("Transfer-Encoding") == "chunked")
        #expect(head.header("Content-Type") == "text/event-stream" && head.header("Content-Length") == nil)
        #expect(head.header("Connection") == "close" && head.header("Date")?.hasSuffix(" GMT") == true)
        #expect(eventually { bodies.count == 1 && bodies[0].isParked }, "nothing written: the stream parks")
        #expect(eventually { server.openConnections == 1 }, "libmicrohttpd let go of the connection; the stream counts")
        for index in 0 ..< 3 {
            #expect(write("event \(index)\n", to: bodies[0]))
            #expect(try connection.readChunk().map { String(decoding: $0, as: UTF8.self) } == "event \(index)\n")
        }
        bodies[0].finish()
        #expect(try connection.readChunk() == nil, "finish ends the chunked body")
        #expect(try connection.readUntilClosed().isEmpty, "then the connection closes, as its head said")
        #expect(!bodies[0].isOpen && !write("late", to: bodies[0]), "a finished body takes no more")
        #expect(eventually { server.streamsOpen == 0 && server.openConnections == 0 })
    }

    @Test func anHTTP10StreamIsSentUnchunkedAndEndsWithTheConnectionAndAHeadRequestGetsTheHeadOnly() throws {
        let bodies = OpenBodies()
        let server = try startStreamingServer(bodies)
        defer { server.shutdown() }
        let old = try RawHTTPConnection(port: server.port)
        try old.sendText("GET /stream HTTP/1.0\r\n\r\n")
        let head = try old.readResponseHead()
        #expect(head.status == 200 && head.header("Transfer-Encoding") == nil && head.header("Connection") == "close")
        #expect(eventually { bodies.count == 1 && bodies[0].isParked })
        #expect(write("data: one\n\n", to: bodies[0]))
        bodies[0].finish()
        #expect(String(decoding: try old.readUntilClosed(), as: UTF8.self) == "data: one\n\n")

        let headOnly = try RawHTTPConnection(port: server.port)
        try headOnly.sendText("HEAD /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try headOnly.readResponseHead().header("Content-Type") == "text/event-stream")
        #expect(try headOnly.readUntilClosed().isEmpty, "no body follows the head of a HEAD")
        #expect(eventually { bodies.count == 2 && !bodies[1].isOpen })
    }

    @Test(arguments: [199, 600])
    func aStreamWithAStatusOutsideTheFinalRangeIsAPlainText500AndItsBodyEnded(status: Int) throws {
        let bodies = OpenBodies()
        let server = try startServer { _ in
            let body = StreamedBody(limit: 1024)
            bodies.add(body)
            return HTTPResponse(status: status, headers: [("Content-Type", "text/event-stream")], stream: body)
        }
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 500)
        #expect(response.bodyText.contains("status \(status) is not a final HTTP status (200...599)"))
        #expect(bodies.count == 1 && !bodies[0].isOpen, "the body was not ended")
    }

    @Test func streamsFromOneAddressAreHeldToThePerAddressLimitAndTheNextIsRefused() throws {
        let bodies = OpenBodies()
        let server = try startStreamingServer(perIPConnectionLimit: 3, bodies)
        defer { server.shutdown() }
        // libmicrohttpd counts a taken-over stream's connection against the address until its
        // thread has cleaned it up, and closes a connection past the limit unread: ask again.
        func answer() throws -> (RawHTTPConnection, RawHTTPResponse) {
            for _ in 0 ..< 100 {
                let connection = try RawHTTPConnection(port: server.port)
                try? connection.sendText("GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
                if let head = try? connection.readResponseHead() { return (connection, head) }
                usleep(50_000)
            }
            Issue.record("libmicrohttpd kept closing the connections")
            throw RawHTTPError.closedBeforeResponseEnded
        }
        var streams: [RawHTTPConnection] = []
        for _ in 0 ..< 3 {
            let (stream, head) = try answer()
            #expect(head.status == 200)
            streams.append(stream)
        }
        #expect(eventually { server.openConnections == 3 })
        let (refusedConnection, refusedHead) = try answer()
        #expect(refusedHead.status == 429, "\(refusedHead)")
        let refusedBody = try refusedConnection.readResponseBody(
            length: Int(refusedHead.header("Content-Length") ?? "0") ?? 0)
        #expect(String(decoding: refusedBody, as: UTF8.self) == "streams from this address, limit 3")
        streams.removeLast()  // closes it: its slot is free again
        #expect(eventually { server.streamsOpen == 2 })
        #expect(try answer().1.status == 200)
    }

    @Test func aParkedStreamHoldsNoThread() throws {
        let bodies = OpenBodies()
        let server = try startStreamingServer(threads: 1, bodies)
        defer { server.shutdown() }
        let streams = try (0 ..< 3).map { _ in try RawHTTPConnection(port: server.port) }
        for stream in streams {
            try stream.sendText("GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(try stream.readResponseHead().status == 200)
        }
        #expect(eventually { bodies.count == 3 && (0 ..< 3).allSatisfy { bodies[$0].isParked } })
        let other = try RawHTTPConnection(port: server.port)
        #expect(try other.request("GET", "/meanwhile").bodyText == "plain /meanwhile", "one thread, three open streams")
        for (index, stream) in streams.enumerated().reversed() {
            #expect(write("to \(index)", to: bodies[index]))
            #expect(try stream.readChunk().map { String(decoding: $0, as: UTF8.self) } == "to \(index)")
            bodies[index].finish()
            #expect(try stream.readChunk() == nil)
        }
    }

    @Test func aClientThatLeavesEndsItsBodyAtOnceWithoutAWrite() throws {
        let bodies = OpenBodies()
        let server = try startStreamingServer(bodies)
        defer { server.shutdown() }
        let ended = Signal()
        do {
            let connection = try RawHTTPConnection(port: server.port)
            try connection.sendText("GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(try connection.readResponseHead().status == 200)
            #expect(eventually { bodies.count == 1 && bodies[0].isParked })
            bodies[0].onEnd { ended.fire() }
        }  // the client closes its socket while the stream is parked
        #expect(ended.wait(seconds: 60), "the end action ran: the loop saw the client leave")
        #expect(!bodies[0].isOpen && !write("ping\n", to: bodies[0]), "writes are refused")
        #expect(eventually { server.streamsOpen == 0 })
    }

    @Test func bytesAfterAStreamsRequestAreDroppedAndAHalfCloseEndsOnlyThatStream() throws {
        let bodies = OpenBodies()
        let server = try startStreamingServer(bodies)
        defer { server.shutdown() }
        // A pipelined request and garbage after the stream's request, then 100 KB more: read and
        // dropped, never answered, and the stream goes on.
        let chatty = try RawHTTPConnection(port: server.port)
        try chatty.sendText(
            "GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n\u{0}\u{1}junk")
        #expect(try chatty.readResponseHead().status == 200)
        #expect(eventually { bodies.count == 1 && bodies[0].isParked })
        try chatty.sendBytes(Array(repeating: 0x41, count: 100_000))
        #expect(write("still here\n", to: bodies[0]))
        #expect(try chatty.readChunk().map { String(decoding: $0, as: UTF8.self) } == "still here\n")
        // A client that half-closes says it reads no more: its stream ends (as libmicrohttpd
        // treats a read of the end), and only its stream.
        let halfClosing = try RawHTTPConnection(port: server.port)
        try halfClosing.sendText("GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try halfClosing.readResponseHead().status == 200)
        #expect(eventually { bodies.count == 2 && bodies[1].isParked })
        let ended = Signal()
        bodies[1].onEnd { ended.fire() }
        halfClosing.shutdownWriting()
        #expect(ended.wait(seconds: 60), "the half-closed stream ended")
        #expect(write("after\n", to: bodies[0]))
        #expect(try chatty.readChunk().map { String(decoding: $0, as: UTF8.self) } == "after\n")
        #expect(try RawHTTPConnection(port: server.port).request("GET", "/plain").bodyText == "plain /plain")
        #expect(eventually { server.streamsOpen == 1 })
    }

    @Test func aStreamHandedToStoppedSocketsIsClosedAndEndedAtOnce() throws {
        let sockets = try #require(StreamSockets(loops: 1, limitPerAddress: 0))
        sockets.stop(by: .now)
        #expect(!sockets.reserve(for: nil), "stopped sockets take no new stream")
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        let body = StreamedBody()
        let ended = Signal()
        // A take-over that raced the stop (reserved just before it) still ends cleanly.
        sockets.adopt(
            socket: pair[0], head: Array("HTTP/1.1 200 OK\r\n\r\n".utf8), body: body, chunked: true, address: nil
        ) {
            ended.fire()
        }
        #expect(ended.wait(seconds: 10) && !body.isOpen)
        var byte: UInt8 = 0
        #expect(read(pair[1], &byte, 1) == 0, "the socket was closed, nothing sent")
    }

    @Test func aStopFinishesOpenStreamsAndSendsWhatWasWritten() throws {
        let bodies = OpenBodies()
        let server = try startStreamingServer(bodies)
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try connection.readResponseHead().status == 200)
        #expect(eventually { bodies.count == 1 && bodies[0].isParked })
        #expect(bodies[0].write(Array("last words\n".utf8)))
        server.shutdown(gracePeriod: .milliseconds(200))
        #expect(try connection.readChunk().map { String(decoding: $0, as: UTF8.self) } == "last words\n")
        #expect(try connection.readChunk() == nil, "the stream ends cleanly")
        #expect(!bodies[0].isOpen)
    }

    @Test func aReaderThatFallsMoreThanTheLimitBehindIsDropped() throws {
        let bodies = OpenBodies()
        let server = try startStreamingServer(limit: 4_096, bodies)
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try connection.readResponseHead().status == 200)
        #expect(eventually { bodies.count == 1 && bodies[0].isParked })
        // The client reads nothing: the socket buffers fill, then the body, then a write is refused.
        let piece = String(repeating: "x", count: 1_000) + "\n"
        var refusedAfter = 0
        for index in 1 ... 100_000 where !bodies[0].write(Array(piece.utf8)) {
            refusedAfter = index
            break
        }
        #expect(refusedAfter > 4, "the limit counts what waits, not what was sent")
        #expect(!bodies[0].isOpen)
        #expect(eventually { server.streamsOpen == 0 }, "the connection is dropped")
        #expect(throws: (any Error).self, "the body was cut off, not ended") {
            while try connection.readChunk() != nil {}
        }
    }
}
