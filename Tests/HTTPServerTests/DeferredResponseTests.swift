import Foundation
import HTTPTestSupport
import Synchronization
import Testing

@testable import HTTPCore
@testable import HTTPServer

/// Completes deferred responses on a thread of its own, in the order they were handed over, when
/// the test says so: what a store's reply thread does.
private final class Completer: Sendable {
    private let pending = Mutex<[DeferredResponse]>([])

    func hold(_ deferred: DeferredResponse) { pending.withLock { $0.append(deferred) } }

    var count: Int { pending.withLock { $0.count } }

    /// Makes every held response ready from another thread; returns how many.
    @discardableResult
    func completeAll() -> Int {
        let all = pending.withLock { held in
            defer { held = [] }
            return held
        }
        let done = DispatchSemaphore(value: 0)
        Thread {
            for deferred in all { deferred.ready() }
            done.signal()
        }.start()
        done.wait()
        return all.count
    }
}

private func startReplyingServer(
    threads: Int = 2, gatherResumesAbove: Int = HTTPServerConfiguration().gatherResumesAbove,
    _ handler: @escaping @Sendable (HTTPRequest) -> HTTPReply
) throws -> HTTPServer {
    var configuration = HTTPServerConfiguration()
    configuration.gatherResumesAbove = gatherResumesAbove
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.threads = threads
    configuration.perIPConnectionLimit = 0
    return try HTTPServer(configuration: configuration, replying: handler, rejection: standardRejection)
}

/// Waits (bounded) until `condition` holds.
private func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0 ..< 3_000 {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

@Suite("HTTPServer live: deferred responses suspend their connection until ready")
struct DeferredResponseTests {
    @Test func aDeferredResponseIsSentOnceReadyAndTheConnectionStaysOpen() throws {
        let completer = Completer()
        let server = try startReplyingServer { request in
            let path = request.path
            let deferred = DeferredResponse { HTTPResponse(status: 200, body: Array("late \(path)".utf8)) }
            completer.hold(deferred)
            return .deferred(deferred)
        }
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        for index in 0 ..< 3 {
            try connection.sendText("GET /r\(index) HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(eventually { completer.count == 1 })
            #expect(server.requestsInFlight == 1)  // handled, not answered: waiting
            #expect(completer.completeAll() == 1)
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyText == "late /r\(index)")
            #expect(response.header("connection")?.lowercased() != "close")  // keep-alive kept
        }
    }

    @Test func oneThreadServesOtherConnectionsWhileAResponseWaits() throws {
        // One server thread: if the waiting request held it, the second connection would get nothing.
        let completer = Completer()
        let server = try startReplyingServer(threads: 1) { request in
            if request.path == "/wait" {
                let deferred = DeferredResponse { HTTPResponse(status: 200, body: Array("waited".utf8)) }
                completer.hold(deferred)
                return .deferred(deferred)
            }
            return .response(HTTPResponse(status: 200, body: Array("now".utf8)))
        }
        defer { server.shutdown() }
        let waiting = try RawHTTPConnection(port: server.port)
        try waiting.sendText("GET /wait HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(eventually { completer.count == 1 })
        let other = try RawHTTPConnection(port: server.port)
        for _ in 0 ..< 5 {
            try other.sendText("GET /now HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(try other.readResponse().bodyText == "now")
        }
        completer.completeAll()
        #expect(try waiting.readResponse().bodyText == "waited")
    }

    @Test func aResponseReadyBeforeTheHandlerReturnsIsSentAtOnce() throws {
        let server = try startReplyingServer { request in
            let deferred = DeferredResponse { HTTPResponse(status: 201, body: Array(request.body)) }
            deferred.ready()
            return .deferred(deferred)
        }
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        for index in 0 ..< 20 {
            let body = "b\(index)"
            try connection.sendText(
                "POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            let response = try connection.readResponse()
            #expect(response.status == 201)
            #expect(response.bodyText == body)
        }
    }

    @Test func transformsApplyInOrderToTheMadeResponse() throws {
        let deferred = DeferredResponse { HTTPResponse(status: 200, body: Array("a".utf8)) }
        deferred.map {
            var r = $0
            r.body += Array("b".utf8)
            return r
        }.map {
            var r = $0
            r.body += Array("c".utf8)
            return r
        }
        deferred.ready()
        #expect(String(decoding: deferred.waitForResponse().body, as: UTF8.self) == "abc")
        let abandoned = DeferredResponse { HTTPResponse(status: 200) }
        abandoned.map {
            var r = $0
            r.headers.append((name: "X-T", value: "1"))
            return r
        }
        abandoned.abandon(with: HTTPResponse(status: 503))
        abandoned.ready()  // too late: ignored
        let response = abandoned.response()
        #expect(response.status == 503)
        #expect(response.headers.contains { $0.name == "X-T" })
    }

    @Test func manyConnectionsWaitingAtOnceAreAllAnswered() throws {
        let completer = Completer()
        let server = try startReplyingServer { request in
            let path = request.path
            let deferred = DeferredResponse { HTTPResponse(status: 200, body: Array(path.utf8)) }
            completer.hold(deferred)
            return .deferred(deferred)
        }
        defer { server.shutdown() }
        let connections = try (0 ..< 200).map { _ in try RawHTTPConnection(port: server.port) }
        for (index, connection) in connections.enumerated() {
            try connection.sendText("GET /c\(index) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        }
        #expect(eventually { completer.count == 200 })
        completer.completeAll()
        var answered = 0
        for (index, connection) in connections.enumerated() where try connection.readResponse().bodyText == "/c\(index)"
        {
            answered += 1
        }
        #expect(answered == 200)
    }

    @Test func aClientThatHangsUpWhileItsResponseWaitsCostsTheServerNothing() throws {
        let completer = Completer()
        let server = try startReplyingServer { request in
            let deferred = DeferredResponse { HTTPResponse(status: 200, body: Array(repeating: 0x61, count: 100_000)) }
            completer.hold(deferred)
            return .deferred(deferred)
        }
        defer { server.shutdown() }
        do {  // these connections go away (deinit closes them) before their answers are ready
            let gone = try (0 ..< 10).map { _ in try RawHTTPConnection(port: server.port) }
            for connection in gone { try connection.sendText("GET /gone HTTP/1.1\r\nHost: localhost\r\n\r\n") }
            #expect(eventually { completer.count == 10 })
        }
        completer.completeAll()  // sent into closed sockets: dropped, the connections closed
        #expect(eventually { server.requestsInFlight == 0 })
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET /next HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(eventually { completer.count == 1 })
        completer.completeAll()
        #expect(try connection.readResponse().body.count == 100_000)
    }

    @Test func stoppingAnswersEveryResponseThatNeverBecomesReadyWithAWhole503() throws {
        let completer = Completer()
        let server = try startReplyingServer { _ in
            let deferred = DeferredResponse { HTTPResponse(status: 200) }
            completer.hold(deferred)  // never made ready
            return .deferred(deferred)
        }
        let connections = try (0 ..< 4).map { _ in try RawHTTPConnection(port: server.port) }
        for connection in connections { try connection.sendText("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n") }
        #expect(eventually { completer.count == 4 })
        server.shutdown(gracePeriod: .milliseconds(500))
        #expect(server.requestsInFlight == 0)
        // Each waiting request got the whole stopping answer, then its connection was closed.
        var answered = 0
        for connection in connections {
            let response = try connection.readResponse()
            #expect(response.status == 503 && response.header("Retry-After") == "1", "\(response)")
            #expect(response.header("Connection")?.lowercased() == "close")
            #expect(try connection.readUntilClosed().isEmpty)
            answered += 1
        }
        #expect(answered == connections.count)
    }

    @Test func manySuspendedWaitsAreResumedTogetherAndAStopWaitsForThoseGathered() throws {
        let completer = Completer()
        // Gathered above 2 suspended connections: 8 waits made ready one after the other find
        // the others still suspended.
        let server = try startReplyingServer(gatherResumesAbove: 2) { request in
            let path = request.path
            let deferred = DeferredResponse { HTTPResponse(status: 200, body: Array("done \(path)".utf8)) }
            completer.hold(deferred)
            return .deferred(deferred)
        }
        let connections = try (0 ..< 8).map { _ in try RawHTTPConnection(port: server.port) }
        for (index, connection) in connections.enumerated() {
            try connection.sendText("GET /first\(index) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        }
        #expect(eventually { completer.count == 8 })
        #expect(completer.completeAll() == 8)
        for (index, connection) in connections.enumerated() {
            #expect(try connection.readResponse().bodyText == "done /first\(index)")
        }
        #expect(server.gatheredResumes >= 6, "the resumes went out gathered")
        // Made ready, then stopped at once: the stop waits for the gathered resumes it finds
        // pending (MHD_stop_daemon aborts the process on a suspended connection).
        for (index, connection) in connections.enumerated() {
            try connection.sendText("GET /last\(index) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        }
        #expect(eventually { completer.count == 8 })
        #expect(completer.completeAll() == 8)
        server.shutdown(gracePeriod: .milliseconds(200))
        for (index, connection) in connections.enumerated() {
            #expect(try connection.readResponse().bodyText == "done /last\(index)")
        }
    }

    @Test func onceTheWaitsAreClosedNoConnectionIsSuspendedAndEveryRequestIsRefused() throws {
        let sockets = try #require(StreamSockets(loops: 1, limitPerAddress: 0))
        defer { sockets.stop(by: .now) }
        let context = ServerContext(
            handler: { _ in .response(HTTPResponse(status: 200)) }, rejection: standardRejection, maxBodyBytes: 1,
            stoppingResponse: HTTPResponse(status: 503), requestDeadlines: RequestDeadlineSweeper(timeout: .seconds(1)),
            streamSockets: sockets)
        #expect(!context.isRefusingRequests)
        context.closeWaits()
        #expect(context.isRefusingRequests)
        // Refused before libmicrohttpd is asked to suspend anything (the pointer is never used).
        let deferred = DeferredResponse { HTTPResponse(status: 200) }
        #expect(!context.suspend(OpaquePointer(bitPattern: 1)!, until: deferred))
    }
}
