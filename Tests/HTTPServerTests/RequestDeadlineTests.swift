import HTTPTestSupport
import Testing

@testable import HTTPCore
@testable import HTTPServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A connected pair of local sockets: the sweeper shuts down `server`, the test watches `client`.
final class DeadlineSocketPair {
    let server: Int32
    let client: Int32

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw RawHTTPError.socket(errno) }
        server = fds[0]
        client = fds[1]
    }

    deinit {
        close(server)
        close(client)
    }

    /// True once `server` has been shut down: `client` reads end of stream (never waits).
    var serverShutDown: Bool {
        var byte: UInt8 = 0
        return recv(client, &byte, 1, Int32(MSG_DONTWAIT)) == 0
    }
}

@Suite("Request deadlines: the sweeper's stages, and slow handlers")
struct RequestDeadlineTests {
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func aFirstRequestIsShutDownOnceItsHeadersAreOneTimeoutPastTheAccept() throws {
        let pair = try DeadlineSocketPair()
        let sweeper = RequestDeadlineSweeper(timeout: .seconds(1))
        let watch = ConnectionWatch(socket: pair.server, acceptedAt: at(0))
        sweeper.register(watch)
        sweeper.sweep(now: at(999))
        #expect(!pair.serverShutDown)
        sweeper.sweep(now: at(1000))
        #expect(pair.serverShutDown)
        sweeper.unregister(watch)
    }

    @Test func noDeadlineWhileARequestIsAnsweredHoweverLongItTakes() throws {
        let pair = try DeadlineSocketPair()
        let sweeper = RequestDeadlineSweeper(timeout: .seconds(1))
        let watch = ConnectionWatch(socket: pair.server, acceptedAt: at(0))
        sweeper.register(watch)
        watch.headersCompleted(bodyFollows: false)
        sweeper.sweep(now: at(500))
        sweeper.sweep(now: at(60_000))
        #expect(!pair.serverShutDown)
        sweeper.unregister(watch)
    }

    /// A later request and a body each count from the sweep that first sees them (here, on a
    /// socket without TCP_INFO, the later request cannot be told from an idle wait).
    @Test(arguments: [false, true])
    func eachLaterStageCountsFromTheSweepThatFirstSeesIt(body: Bool) throws {
        let pair = try DeadlineSocketPair()
        let sweeper = RequestDeadlineSweeper(timeout: .seconds(1))
        let watch = ConnectionWatch(socket: pair.server, acceptedAt: at(0))
        sweeper.register(watch)
        watch.headersCompleted(bodyFollows: body)
        if body {
            sweeper.sweep(now: at(5000))  // the body is first seen: its time starts here
        } else {
            watch.requestCompleted()
            sweeper.sweep(now: at(5000))  // the next wait is first seen
        }
        sweeper.sweep(now: at(5999))
        #expect(!pair.serverShutDown)
        sweeper.sweep(now: at(6000))
        #expect(pair.serverShutDown)
        sweeper.unregister(watch)
    }

    @Test func theStagesOfARequestAlwaysMoveForward() {
        let watch = ConnectionWatch(socket: -1, acceptedAt: at(0))
        #expect(ConnectionWatch.stage(of: watch.phase) == .headers)
        watch.headersCompleted(bodyFollows: true)
        #expect(ConnectionWatch.stage(of: watch.phase) == .body)
        watch.headersCompleted(bodyFollows: false)  // not a step back
        #expect(ConnectionWatch.stage(of: watch.phase) == .body)
        watch.bodyReceived()
        #expect(ConnectionWatch.stage(of: watch.phase) == .answering)
        watch.requestCompleted()
        #expect(watch.phase == 4 && ConnectionWatch.stage(of: watch.phase) == .headers)
        watch.requestCompleted()  // no request in progress: nothing to complete
        #expect(watch.phase == 4)
    }

    /// The deadlines end when the request has arrived: a handler slower than the timeout still
    /// answers, with or without a body, and the keep-alive connection goes on.
    @Test(.timeLimit(.minutes(10)))
    func aHandlerSlowerThanTheHeaderTimeoutStillAnswers() throws {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.headerTimeoutSeconds = 1
        let server = try HTTPServer(
            configuration: configuration,
            handler: { request in
                usleep(1_600_000)
                return HTTPResponse(status: 200, body: Array("\(request.method) \(request.body.count)".utf8))
            },
            rejection: standardRejection)
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port, receiveTimeoutSeconds: 10)
        let get = try connection.request("GET", "/slow")
        let put = try connection.request("PUT", "/slow", body: Array("twelve bytes".utf8))
        #expect(get.status == 200 && get.bodyText == "GET 0", "\(get)")
        #expect(put.status == 200 && put.bodyText == "PUT 12", "\(put)")
    }
}
