// `menu-server healthcheck`, the container image's HEALTHCHECK: the built executable asks a live
// server for /healthz with the server's own settings (so MENU_PORT moves both), and exits 1 with
// a reason when nothing listens or the server stays silent.

import ChildProcess
import Foundation
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension AppTests {
    @Suite("menu-server healthcheck: GET /healthz with the server's settings")
    struct HealthCheckCommandTests {
        /// Runs `menu-server healthcheck` with `arguments` and `environment` added to the child's.
        private func healthCheck(_ arguments: [String], environment: [String: String] = [:]) throws -> LiveExit {
            try liveRun(try LivePaths.executable(), ["healthcheck"] + arguments, environment: environment)
        }

        /// A TCP listener on a free loopback port that accepts nothing: a connect succeeds (the
        /// kernel's backlog) and then no byte ever comes back.
        private func silentListener() throws -> (socket: Int32, port: Int) {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0, listen(listener, 8) == 0 else { throw LiveError("cannot listen: \(errno)") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
            }
            return (listener, Int(UInt16(bigEndian: address.sin_port)))
        }

        @Test func itPassesOnTheServersPortGivenByFlagOrByMENU_PORT() throws {
            let server = try LiveChildServer()
            defer { _ = server.signalAndWait() }
            let byFlag = try healthCheck(["--port", String(server.port)])
            #expect(byFlag.termination == .exited(0), "\(byFlag.stderr)")
            #expect(byFlag.stdout.hasPrefix("HTTP/1.1 200 "))
            // The image sets MENU_HOST=0.0.0.0: the wildcard is asked on loopback.
            let byEnvironment = try healthCheck(
                [], environment: ["MENU_PORT": String(server.port), "MENU_HOST": "0.0.0.0"])
            #expect(byEnvironment.termination == .exited(0), "\(byEnvironment.stderr)")
        }

        @Test func itFailsWithAReasonWhenNothingListensOrNothingAnswers() throws {
            let (listener, port) = try silentListener()
            // Closed exactly once, here, whatever happens: a second close could hit a descriptor
            // another test opened meanwhile under the same number.
            let silent: LiveExit
            do {
                defer { close(listener) }  // now nothing listens there
                silent = try healthCheck(["--port", String(port)])
            }
            #expect(silent.termination == .exited(1))
            #expect(
                silent.stderr.contains("timed out after 2000 ms waiting for 127.0.0.1 port \(port)"), "\(silent.stderr)"
            )
            let refused = try healthCheck(["--port", String(port)])
            #expect(refused.termination == .exited(1))
            #expect(refused.stderr.contains("cannot connect to 127.0.0.1 port \(port)"), "\(refused.stderr)")
            let badFlag = try healthCheck(["--port", "x"])
            #expect(badFlag.termination == .exited(2))
        }
    }
}
