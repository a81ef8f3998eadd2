import Foundation
import HTTPTestSupport
import Testing

@testable import HTTPCore
@testable import HTTPServer

@Suite("HTTPServer live: start-up errors")
struct StartupErrorTests {
    @Test func hostThatIsNotAnAddressLiteralIsRefused() {
        var configuration = HTTPServerConfiguration()
        configuration.host = "localhost"
        configuration.port = 0
        #expect(throws: HTTPServerError.invalidHost("localhost")) {
            try HTTPServer(
                configuration: configuration, handler: { _ in HTTPResponse(status: 200) },
                rejection: standardRejection)
        }
        #expect(HTTPServerError.invalidHost("localhost").description.contains("127.0.0.1"))
    }

    @Test(arguments: [
        ("port", 70_000), ("threads", 0), ("maxBodyBytes", -1), ("connectionLimit", 0),
        ("perIPConnectionLimit", -1), ("connectionTimeoutSeconds", -5), ("connectionMemoryLimit", 100),
        ("listenBacklog", 0), ("headerTimeoutSeconds", -1), ("headerTimeoutSeconds", 86_401)
    ])
    func outOfRangeSettingIsRefusedByName(setting: String, value: Int) {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        switch setting {
        case "port": configuration.port = value
        case "threads": configuration.threads = value
        case "maxBodyBytes": configuration.maxBodyBytes = value
        case "connectionLimit": configuration.connectionLimit = value
        case "perIPConnectionLimit": configuration.perIPConnectionLimit = value
        case "connectionTimeoutSeconds": configuration.connectionTimeoutSeconds = value
        case "connectionMemoryLimit": configuration.connectionMemoryLimit = value
        case "headerTimeoutSeconds": configuration.headerTimeoutSeconds = value
        default: configuration.listenBacklog = value
        }
        do {
            _ = try HTTPServer(
                configuration: configuration, handler: { _ in HTTPResponse(status: 200) },
                rejection: standardRejection)
            Issue.record("\(setting) = \(value) was accepted")
        } catch {
            guard case .invalidConfiguration(let name, let reported, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(name == setting)
            #expect(reported == value)
            #expect(error.description.contains(setting))
        }
    }

    @Test func portAlreadyInUseReportsCannotStartWithReason() throws {
        let first = try startServer()
        defer { first.shutdown() }
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = first.port
        do {
            let second = try HTTPServer(
                configuration: configuration, handler: { _ in HTTPResponse(status: 200) },
                rejection: standardRejection)
            second.shutdown()
            Issue.record("a second server bound the same port")
        } catch {
            guard case .cannotStart(_, let port, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(port == first.port)
            #expect(!reason.isEmpty)
            #expect(error.description.contains("127.0.0.1:\(first.port)"))
        }
    }

    /// Whether this machine can bind a TCP socket to `::1` at all (containers without IPv6
    /// cannot): an environment limit, not a bug, so the test below is skipped, by name, there.
    static let canBindIPv6Loopback = machineCanBindIPv6Loopback()

    @Test(.enabled(if: canBindIPv6Loopback, "this machine cannot bind ::1 (no IPv6 loopback)"))
    func ipv6LoopbackHostIsHonoured() throws {
        var configuration = HTTPServerConfiguration()
        configuration.host = "::1"
        configuration.port = 0
        let server = try HTTPServer(
            configuration: configuration, handler: { _ in HTTPResponse(status: 200) },
            rejection: standardRejection)
        defer { server.shutdown() }
        #expect(server.port > 0)
        // Bound to ::1 only, so the IPv4 loopback on that port must not answer.
        #expect(RawHTTPConnection.connectErrno(port: server.port) == ECONNREFUSED)
    }
}
