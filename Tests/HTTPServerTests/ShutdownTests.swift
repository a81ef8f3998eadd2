import Foundation
import HTTPTestSupport
import Testing

@testable import HTTPCore
@testable import HTTPServer

@Suite("HTTPServer live: shutdown")
struct ShutdownTests {
    /// A grace period no wait in these tests comes near: a shutdown that sat it out instead of
    /// returning once nothing is in flight fails the test (its wait is bounded by
    /// `eventuallyBound`, a quarter of this) rather than passing slowly.
    static let longGracePeriod: Duration = .seconds(120)

    @Test func shutdownLetsInFlightSlowHandlerFinishThenPortRefusesConnections() throws {
        let handlerStarted = Signal()
        let handlerMayFinish = Signal()
        let server = try startServer { request in
            if request.path == "/slow" {
                handlerStarted.fire()
                _ = handlerMayFinish.wait(seconds: 120)
            }
            return HTTPResponse(status: 200, body: Array("finished".utf8))
        }
        defer { server.shutdown() }
        let port = server.port

        let result = Box<Result<RawHTTPResponse, RawHTTPError>>()
        let clientDone = Signal()
        Thread {
            defer { clientDone.fire() }
            do {
                let connection = try RawHTTPConnection(port: port)
                try connection.sendText("GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n")
                result.set(.success(try connection.readResponse()))
            } catch let error as RawHTTPError {
                result.set(.failure(error))
            } catch {
                result.set(.failure(.malformed("\(error)")))
            }
        }.start()

        try #require(handlerStarted.wait(seconds: 30))
        let shutdownDone = Signal()
        Thread {
            server.shutdown(gracePeriod: Self.longGracePeriod)
            shutdownDone.fire()
        }.start()
        // Shutdown has begun (the port refuses) while the handler still holds its request, and
        // it cannot have returned: the request is in flight until the handler is let go.
        #expect(
            eventually { RawHTTPConnection.connectErrno(port: port) == ECONNREFUSED },
            "the port still accepts connections during the grace period")
        #expect(result.value == nil, "the client got an answer before the handler finished")
        handlerMayFinish.fire()

        // Once the handler finishes, the response goes out whole and shutdown returns without
        // sitting out the rest of the grace period.
        #expect(clientDone.wait(seconds: 30))
        #expect(shutdownDone.wait(seconds: 30), "shutdown waited for the grace period, not for the request")
        let response = try #require(try result.value?.get())
        #expect(response.status == 200)
        #expect(response.bodyText == "finished")
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(RawHTTPConnection.connectErrno(port: port) == ECONNREFUSED)
    }

    @Test func shutdownDoesNotWaitForIdleKeepAliveConnections() throws {
        let server = try startServer()
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try connection.readResponse().status == 200)

        // The connection stays open and idle: shutdown returns long before the grace period ends.
        let shutdownDone = Signal()
        Thread {
            server.shutdown(gracePeriod: Self.longGracePeriod)
            shutdownDone.fire()
        }.start()
        #expect(shutdownDone.wait(seconds: 30), "shutdown waited for an idle keep-alive connection")
        #expect(try connection.readUntilClosed().isEmpty)
    }

    @Test func shutdownIsIdempotentAndSafeFromSeveralThreads() throws {
        let server = try startServer()
        let port = server.port
        let group = DispatchGroup()
        for _ in 0 ..< 4 {
            group.enter()
            Thread {
                server.shutdown(gracePeriod: .milliseconds(100))
                group.leave()
            }.start()
        }
        #expect(group.wait(timeout: .now() + 30) == .success)
        server.shutdown()
        #expect(RawHTTPConnection.connectErrno(port: port) == ECONNREFUSED)
    }

    @Test func releasingTheServerStopsIt() throws {
        var server: HTTPServer? = try startServer()
        let port = try #require(server?.port)
        #expect(RawHTTPConnection.connectErrno(port: port) == 0)
        server = nil
        #expect(RawHTTPConnection.connectErrno(port: port) == ECONNREFUSED)
    }
}
