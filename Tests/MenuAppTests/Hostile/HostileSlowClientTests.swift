// Slow clients against a real menu-server: the header and body deadlines (`--header-timeout`),
// which hold however slowly the bytes trickle in, and the per-IP connection limit (`--per-ip-connections`).

import Foundation
import HTTPServer
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import MenuService
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How a trickled request ended.
struct SlowTrickle: Sendable {
    /// Bytes sent before the server closed the connection (all of them if it never did).
    var bytesSent: Int
    /// Seconds from the start of the request until the close was seen; nil if it never was.
    var closedAfter: Double?
}

/// Sends `bytes` one at a time, `interval` apart, on `connection`, and stops as soon as the server
/// has closed the connection (or a send fails because it has). `since` is when the request
/// started (the connect for a first request, the previous response for a later one).
func slowTrickle(
    _ bytes: [UInt8], on connection: RawHTTPConnection, every interval: Duration,
    since start: ContinuousClock.Instant
) -> SlowTrickle {
    func seconds() -> Double { Double((ContinuousClock.now - start) / .milliseconds(1)) / 1000 }
    for (index, byte) in bytes.enumerated() {
        if connection.isAlreadyClosedByPeer { return SlowTrickle(bytesSent: index, closedAfter: seconds()) }
        do { try connection.sendBytes([byte]) } catch { return SlowTrickle(bytesSent: index, closedAfter: seconds()) }
        Thread.sleep(forTimeInterval: Double(interval / .milliseconds(1)) / 1000)
    }
    return SlowTrickle(bytesSent: bytes.count, closedAfter: connection.isClosedByPeer(within: 3) ? seconds() : nil)
}

/// A request line and headers that take `bytes` bytes (each trickled byte 200 ms: 200 bytes = 40 s,
/// far past any header deadline these tests set, so a close before the end is the deadline's).
func slowRequestHead(bytes: Int) -> [UInt8] {
    let head = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
    return Array((head + String(repeating: "s", count: max(1, bytes - head.utf8.count - 4)) + "\r\n\r\n").utf8)
}

extension AppTests {
    @Suite("Hostile slow clients: the header and body deadlines and the per-IP connection limit")
    struct HostileSlowClientTests {
        /// Normal requests on a connection of their own while a slow client is held; every answer
        /// must be the real one.
        static func normalRequestsAreServed(port: Int, count: Int) throws -> [String] {
            var problems: [String] = []
            let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 10)
            for round in 0 ..< count {
                let response = try connection.request("GET", "/healthz")
                if response.status != 200 || response.bodyText != #"{"status":"ok"}"# {
                    problems.append("normal request \(round): \(response)")
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return problems
        }

        @Test(arguments: [1, 2, 3])
        func aRequestTrickledByteByByteIsClosedAtTheHeaderDeadlineWhileOthersAreServed(headerTimeout: Int) async throws
        {
            // The connection timeout (30 s) would never fire: a byte arrives every 200 ms.
            let server = try LiveServer {
                $0.headerTimeoutSeconds = headerTimeout
                $0.connectionTimeoutSeconds = 30
            }
            defer { server.shutdown() }
            let port = server.port
            async let trickled = hostileOnThread { () -> SlowTrickle in
                let start = ContinuousClock.now
                let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 10)
                return slowTrickle(slowRequestHead(bytes: 200), on: connection, every: .milliseconds(200), since: start)
            }
            async let silent = hostileOnThread { () -> Bool in  // connected, sends nothing
                try RawHTTPConnection(port: port, receiveTimeoutSeconds: 10).isClosedByPeer(within: 30)
            }
            let problems = try await hostileOnThread { try Self.normalRequestsAreServed(port: port, count: 10) }
            let trickle = try await trickled
            #expect(problems.isEmpty, "\(problems)")
            let closedAfter = try #require(
                trickle.closedAfter, "the trickling client was never closed (\(trickle.bytesSent) bytes sent)")
            #expect(trickle.bytesSent < 200, "the whole request went through")
            #expect(try await silent, "a connection that sent nothing was not closed (waited 30 s)")
            print(
                "HostileSlowClientTests: --header-timeout \(headerTimeout): trickling client closed \(closedAfter) s after connecting, after \(trickle.bytesSent) bytes"
            )
        }

        @Test
        func aCompleteRequestSentSlowlyWithinTheDeadlineIsServed() async throws {
            // A deadline far past the 1.5 s of pauses, so a busy machine cannot push them past it.
            let server = try LiveServer {
                $0.headerTimeoutSeconds = 120
                $0.connectionTimeoutSeconds = 120
            }
            defer { server.shutdown() }
            let port = server.port
            let response = try await hostileOnThread { () -> RawHTTPResponse in
                let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 10)
                for piece in ["GET /heal", "thz HTTP/1.1\r\n", "Host: x\r\n", "X-Slow: yes\r\n", "\r\n"] {
                    try connection.sendText(piece)
                    Thread.sleep(forTimeInterval: 0.3)  // 1.5 s in all: far within the 120 s deadline
                }
                return try connection.readResponse()
            }
            #expect(response.status == 200 && response.bodyText == #"{"status":"ok"}"#, "\(response)")
        }

        /// The body gets a deadline of its own, counted from its headers: a body trickled forever is
        /// cut off too, while one that arrives slowly within it is answered.
        @Test
        func aBodyTrickledAfterItsHeadersIsClosedAtItsDeadlineAndASlowOneWithinItIsServed() async throws {
            let server = try LiveServer {
                $0.headerTimeoutSeconds = 2
                $0.connectionTimeoutSeconds = 30
            }
            defer { server.shutdown() }
            let port = server.port
            let head = "PUT /groups/main-courses/expansion HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
            async let trickled = hostileOnThread { () -> SlowTrickle in
                let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 10)
                try connection.sendText(head)
                return slowTrickle(
                    Array(#"{"isExpanded":false}"#.utf8) + Array(repeating: 0x20, count: 80), on: connection,
                    every: .milliseconds(200), since: .now)
            }
            // The slowly sent body goes to a server whose deadline (120 s) no pause comes near; the
            // trickled one to the 2 s deadline above.
            let patient = try LiveServer {
                $0.headerTimeoutSeconds = 120
                $0.connectionTimeoutSeconds = 120
            }
            defer { patient.shutdown() }
            let patientPort = patient.port
            let slow = try await hostileOnThread { () -> RawHTTPResponse in
                let connection = try RawHTTPConnection(port: patientPort, receiveTimeoutSeconds: 10)
                let body = #"{"isExpanded":false}"#
                try connection.sendText(
                    "PUT /groups/main-courses/expansion HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                )
                for piece in [body.prefix(8), body.dropFirst(8)] {
                    Thread.sleep(forTimeInterval: 0.5)  // 1 s in all: far within the 120 s deadline
                    try connection.sendText(String(piece))
                }
                return try connection.readResponse()
            }
            #expect(slow.status == 200 && slow.bodyText.contains(#""isExpanded":false"#), "\(slow)")
            let trickle = try await trickled
            let closedAfter = try #require(trickle.closedAfter, "the trickled body was never cut off")
            #expect(trickle.bytesSent < 100)
            print("HostileSlowClientTests: --header-timeout 2: trickled body closed \(closedAfter) s after its headers")
        }

        @Test
        func aSecondRequestTrickledOnAKeepAliveConnectionIsAlsoClosed() async throws {
            let server = try LiveServer {
                $0.headerTimeoutSeconds = 1
                $0.connectionTimeoutSeconds = 30
            }
            defer { server.shutdown() }
            let port = server.port
            let (first, trickle) = try await hostileOnThread { () -> (RawHTTPResponse, SlowTrickle) in
                let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 10)
                let first = try connection.request("GET", "/healthz")
                return (
                    first,
                    slowTrickle(slowRequestHead(bytes: 200), on: connection, every: .milliseconds(200), since: .now)
                )
            }
            #expect(first.status == 200 && first.header("Connection")?.lowercased() != "close", "\(first)")
            let closedAfter = try #require(trickle.closedAfter, "the trickled second request was never closed")
            #expect(trickle.bytesSent < 200)
            print(
                "HostileSlowClientTests: --header-timeout 1: trickled keep-alive request closed \(closedAfter) s after the first response"
            )
        }

        /// The deadline of a later request counts from its first byte, not from the previous
        /// response: waiting between requests is the connection timeout's business.
        @Test
        func aKeepAliveConnectionIdleLongerThanTheHeaderTimeoutStillServesItsNextRequest() async throws {
            let server = try LiveServer {
                $0.headerTimeoutSeconds = 1
                $0.connectionTimeoutSeconds = 30
            }
            defer { server.shutdown() }
            let port = server.port
            let (first, second) = try await hostileOnThread { () -> (RawHTTPResponse, RawHTTPResponse) in
                let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 10)
                let first = try connection.request("GET", "/healthz")
                Thread.sleep(forTimeInterval: 2.5)  // idle: more than the header timeout, less than the connection timeout
                return (first, try connection.request("GET", "/healthz"))
            }
            #expect(first.status == 200, "\(first)")
            #expect(second.status == 200 && second.bodyText == #"{"status":"ok"}"#, "\(second)")
        }

        // MARK: Per-IP connection limit

        /// The limit is on by default, and it is per address: past it, 127.0.0.1 is turned away while
        /// 127.0.0.2 (also loopback, another client address) is still served.
        @Test(arguments: [3, nil])
        func connectionsPastThePerIPLimitFromOneAddressAreRefusedWhileAnotherAddressIsServed(limit: Int?) async throws {
            let server = try LiveServer { settings in
                if let limit { settings.perIPConnections = limit }
            }
            defer { server.shutdown() }
            let port = server.port
            let expectedLimit = limit ?? HTTPServerConfiguration().perIPConnectionLimit
            if limit == nil { #expect(expectedLimit > 0 && ServerSettings().perIPConnections == expectedLimit) }
            let report = try await hostileOnThread { () -> [String] in
                var problems: [String] = []
                var held: [RawHTTPConnection] = []
                for index in 0 ..< expectedLimit {  // each one answered and kept open (keep-alive)
                    let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 10)
                    let response = try connection.request("GET", "/healthz")
                    if response.status != 200 { problems.append("connection \(index) within the limit: \(response)") }
                    held.append(connection)
                }
                let over = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 10)
                try? over.sendRequest("GET", "/healthz")  // a send may already fail: the server closed it
                if !over.isClosedByPeer(within: 30) {
                    problems.append("connection \(expectedLimit + 1) from 127.0.0.1 was not closed")
                }
                let other = try RawHTTPConnection(port: port, sourceHost: "127.0.0.2", receiveTimeoutSeconds: 10)
                let response = try other.request("GET", "/healthz")
                if response.status != 200 { problems.append("127.0.0.2 past 127.0.0.1's limit: \(response)") }
                withExtendedLifetime(held) {}
                return problems
            }
            #expect(report.isEmpty, "\(report)")
        }

        @Test func headerTimeoutIsAFlagAndAnEnvironmentVariable() throws {
            let fromFlag = try ServerSettings.parse(
                arguments: ["--header-timeout", "4"], environment: ["MENU_HEADER_TIMEOUT": "7"])
            let fromEnvironment = try ServerSettings.parse(arguments: [], environment: ["MENU_HEADER_TIMEOUT": "7"])
            guard case .run(let flag) = fromFlag, case .run(let environment) = fromEnvironment else {
                Issue.record("not a run command")
                return
            }
            #expect(flag.headerTimeoutSeconds == 4 && environment.headerTimeoutSeconds == 7)
            #expect(ServerSettings().headerTimeoutSeconds == HTTPServerConfiguration().headerTimeoutSeconds)
            #expect(
                throws: SettingsError.invalidValue(
                    source: "--header-timeout", value: "0", expected: "an integer from 1 to 86400")
            ) {
                try ServerSettings.parse(arguments: ["--header-timeout=0"], environment: [:])
            }
            #expect(ServerSettings.usage.contains("--header-timeout N"))
        }
    }
}
