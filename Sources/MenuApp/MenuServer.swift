import HTTPServer
import MenuService
import MenuSessions
import MenuSessionsDurable
import MenuModel

/// A running menu-server: the menu loaded from settings, the session store, the routing service
/// and the HTTP listener. Start with ``init(settings:log:)``; stop with ``shutdown(gracePeriod:)``.
package final class MenuServer: Sendable {
    package let service: MenuService
    package let http: HTTPServer
    /// The on-disk store when the settings name a data directory (closed by ``shutdown(gracePeriod:)``).
    package let durableStore: DurableSessionStore?
    /// One line for the log saying where sessions are kept.
    package let storageDescription: String

    /// The real port, also when the settings asked for port 0.
    package var port: Int { http.port }
    package let host: String

    package init(settings: ServerSettings, log: @escaping @Sendable (String) -> Void = { _ in }) throws(StartupError) {
        let menu: Menu
        do { menu = try Menu(contentsOfFile: settings.configPath) } catch { throw .invalidConfig(path: settings.configPath, error) }
        let store: any SessionStore
        if let directory = settings.dataDirectory {
            let durable: DurableSessionStore
            do {
                durable = try DurableSessionStore(directory: directory, menu: menu, fsync: settings.fsync,
                                                  maxSessions: settings.maxSessions,
                                                  timeToLive: .seconds(settings.sessionTTLSeconds),
                                                  evictionIdle: .seconds(settings.sessionEvictIdleSeconds),
                                                  maxChangedGroups: settings.maxChangedGroups,
                                                  storeTimeout: .seconds(settings.storeTimeoutSeconds), log: log)
            } catch {
                throw .dataDirectory(error)
            }
            durableStore = durable
            store = durable
            storageDescription = "sessions are kept in \(directory) (journal fsync: \(settings.fsync.rawValue)); "
                + durable.recovery.summary
        } else {
            durableStore = nil
            store = InMemorySessionStore(menu: menu, maxSessions: settings.maxSessions,
                                         timeToLive: .seconds(settings.sessionTTLSeconds),
                                         evictionIdle: .seconds(settings.sessionEvictIdleSeconds),
                                         maxChangedGroups: settings.maxChangedGroups)
            storageDescription = "sessions are kept in memory only; they are lost on restart"
        }
        let service = MenuService(
            menu: menu, store: store, maxLimit: settings.maxLimit,
            sessionRateLimiter: settings.sessionRatePerMinute > 0 ? SessionRateLimiter(perMinute: settings.sessionRatePerMinute) : nil,
            trustedProxy: settings.trustedProxy)
        var configuration = HTTPServerConfiguration()
        configuration.host = settings.host
        configuration.port = settings.port
        configuration.threads = settings.threads
        configuration.maxBodyBytes = MenuService.maxBodyBytes
        configuration.connectionLimit = settings.maxConnections
        configuration.perIPConnectionLimit = settings.perIPConnections
        configuration.connectionTimeoutSeconds = settings.connectionTimeoutSeconds
        configuration.headerTimeoutSeconds = settings.headerTimeoutSeconds
        configuration.connectionMemoryLimit = settings.connectionMemoryLimit
        configuration.listenBacklog = settings.listenBacklog
        do {
            http = try HTTPServer(configuration: configuration,
                                  handler: { service.respond(to: $0) },
                                  rejection: { service.reject($0) })
        } catch {
            durableStore?.close()
            throw .cannotListen(error)
        }
        self.service = service
        self.host = settings.host
    }

    /// The line printed when ready: `menu-server listening on http://HOST:PORT`.
    package var listeningLine: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "menu-server listening on http://\(shownHost):\(port)"
    }

    /// Stops accepting, lets requests in flight finish (up to `gracePeriod`), then stops.
    package func shutdown(gracePeriod: Duration = .seconds(5)) {
        http.shutdown(gracePeriod: gracePeriod)
        durableStore?.close()
    }
}

/// Why the server could not start.
package enum StartupError: Error, Sendable, CustomStringConvertible {
    case invalidConfig(path: String, MenuConfigError)
    case cannotListen(HTTPServerError)
    case dataDirectory(DurableStoreError)

    package var description: String {
        switch self {
        case .invalidConfig(let path, let error):
            error.isUnreadableFile ? error.description : "cannot load menu config \(path): \(error.description)"
        case .cannotListen(let error): error.description
        case .dataDirectory(let error): error.description
        }
    }
}
