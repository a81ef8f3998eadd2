// The live-server launcher: a real menu-server (libmicrohttpd) started in this process on
// 127.0.0.1, port 0, with the live tests' menu. The only place the app tests start an in-process
// server; `ContractTransport` and the child-process launcher (`LiveChildServer`) sit beside it.

import Foundation
import MenuApp
import MenuTestSupport

// MARK: - In-process server

/// A real menu-server (libmicrohttpd) started in this process on 127.0.0.1, port 0.
/// Stop it with `shutdown()` in a `defer`.
package final class LiveServer: Sendable {
    package let server: RunningServer
    package var port: Int { server.port }
    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts the live tests' menu on 127.0.0.1, port 0, with `settings` changed by `configure`.
    package convenience init(serverLog: ServerLog? = nil, configure: (inout ServerSettings) -> Void = { _ in }) throws {
        var settings = ServerSettings()
        settings.port = 0
        settings.host = "127.0.0.1"
        settings.configPath = LivePaths.menuConfig
        configure(&settings)
        try self.init(settings: settings, serverLog: serverLog)
    }

    /// Starts a server with exactly `settings` (a test that builds its own), logging to `serverLog`
    /// when given.
    package init(settings: ServerSettings, serverLog: ServerLog? = nil) throws {
        do {
            server = try RunningServer(settings: settings, serverLog: serverLog)
        } catch {
            throw LiveError("cannot start menu-server: \(error.description)")
        }
    }

    package func shutdown() { server.shutdown(gracePeriod: .seconds(5)) }

    /// A URLSession client for this server.
    package func client() -> LiveHTTPClient { LiveHTTPClient(baseURL: baseURL) }

    /// A raw TCP connection to this server.
    package func connect() throws -> LiveRawConnection { try LiveRawConnection(port: port) }
}
