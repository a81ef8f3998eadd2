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
    threads: Int = 2, limit: Int = 1 << 20, gatherResumesAbove: Int = HTTPServerConfiguration().gatherResumesAbove,
    _ bodies: OpenBodies
) throws -> HTTPServer {
    try startServer(threads: threads, gatherResumesAbove: gatherResumesAbove) { request in
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

@Suite("HTTPServer live: a streamed body is sent as it is written, parking its connection in between")
struct StreamedResponseTests {
    @Test func eachWriteArrivesAsAChunkAndTheFinishedStreamLeavesTheConnectionOpen() throws {
        let bodies = OpenBodies()
        let server = try startStreamingServer(bodies)
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let head = try connection.readResponseHead()
        #expect(head.status == 200 && head.header("Transfer-Encoding") == "chunked")
        #expect(head.header("Content-Type") == "text/event-stream" && head.header("Content-Length") == nil)
        #expect(eventually { bodies.count == 1 && bodies[0].isParked }, "nothing written: the connection parks")
        for index in 0 ..< 3 {
            #expect(write("event \(index)\n", to: bodies[0]))
            #expect(try connection.readChunk().map { String(decoding: $0, as: UTF8.self) } == "event \(index)\n")
        }
        bodies[0].finish()
        #expect(try connection.readChunk() == nil, "finish ends the chunked body")
        #expect(!bodies[0].isOpen && !write("late", to: bodies[0]), "a finished body takes no more")
        let next = try connection.request("GET", "/after")
        #expect(next.status == 200 && next.bodyText == "plain /after", "keep-alive survives the stream")
        #expect(eventually { server.streamsOpen == 0 })
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

    @Test func aClientThatLeftIsFoundByTheNextWriteAndTheBodyEnds() throws {
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
        }  // the client closes its socket while the connection is parked
        #expect(server.streamsOpen == 1, "a parked connection does not see its client leave")
        // The first write after the close may still reach the socket; a later one finds it gone.
        #expect(eventually { !write("ping\n", to: bodies[0]) && !bodies[0].isOpen }, "a write finds the client gone")
        #expect(ended.wait(seconds: 10), "the end action ran")
        #expect(eventually { server.streamsOpen == 0 })
    }

    @Test func aStopFinishesOpenStreamsAndSendsWhatWasWritten() throws {
        let bodies = OpenBodies()
        let server = try startStreamingServer(bodies)
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try connection.readResponseHead().status == 200)
        #expect(eventually { bodies.count == 1 && bodies[0].isParked })
        #expect(bodies[0].write(Array("last words\n".utf8)))
        server.shutdown(gracePeriod: .milliseconds(200))  // MHD_stop_daemon aborts the process on a suspended connection
        #expect(try connection.readChunk().map { String(decoding: $0, as: UTF8.self) } == "last words\n")
        #expect(try connection.readChunk() == nil, "the stream ends cleanly")
        #expect(!bodies[0].isOpen)
    }

    @Test func manyParkedStreamsAreResumedTogetherAndAStopWaitsForThoseGathered() throws {
        let bodies = OpenBodies()
        // Gathered above 2 suspended connections: 8 parked streams written one after the other
        // see at least 3 parked (those not written yet) up to the sixth write.
        let server = try startStreamingServer(gatherResumesAbove: 2, bodies)
        let streams = try (0 ..< 8).map { _ in try RawHTTPConnection(port: server.port) }
        for stream in streams {
            try stream.sendText("GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(try stream.readResponseHead().status == 200)
        }
        #expect(eventually { bodies.count == 8 && (0 ..< 8).allSatisfy { bodies[$0].isParked } })
        for index in 0 ..< 8 { #expect(bodies[index].write(Array("first \(index)\n".utf8))) }
        for (index, stream) in streams.enumerated() {
            #expect(try stream.readChunk().map { String(decoding: $0, as: UTF8.self) } == "first \(index)\n")
        }
        #expect(server.gatheredResumes >= 6, "the writes' resumes went out gathered")
        #expect(eventually { (0 ..< 8).allSatisfy { bodies[$0].isParked } })
        // Written, then stopped at once: the stop waits for the gathered resumes it finds pending
        // (MHD_stop_daemon aborts the process on a suspended connection).
        for index in 0 ..< 8 { #expect(bodies[index].write(Array("last \(index)\n".utf8))) }
        server.shutdown(gracePeriod: .milliseconds(200))
        for (index, stream) in streams.enumerated() {
            #expect(try stream.readChunk().map { String(decoding: $0, as: UTF8.self) } == "last \(index)\n")
            #expect(try stream.readChunk() == nil, "the stream ends cleanly")
        }
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
