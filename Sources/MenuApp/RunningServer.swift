import AdminAccess
import Foundation
import HTTPCore
import HTTPServer
import MenuModel
import MenuService
import MenuSessions
import MenuSessionsDurable
import Metrics
import RedisClient
import Synchronization

/// A running menu-server: the menu loaded from settings, the session store, the routing service
/// and the HTTP listener. Start with ``init(settings:log:)``; reload the menu with ``reload()``
/// (SIGHUP, `--watch-config`); stop with ``shutdown(gracePeriod:)``.
package final class RunningServer: Sendable {
    package let service: MenuAPI
    /// Where sessions are kept: the store, its log line, its figures (let go of by ``shutdown(gracePeriod:)``).
    package let sessions: any SessionBackend
    package var store: any SessionStore { sessions.store }
    package let http: HTTPServer
    /// `GET /metrics` on a listener of its own (``ServerSettings/metricsListen``); nil: on ``http``.
    package let metricsHTTP: HTTPServer?
    /// What `GET /metrics` reports.
    package let metrics: MenuMetrics
    /// The config file ``reload()`` reads.
    package let configPath: String
    private let log: @Sendable (String) -> Void
    /// Held for a whole reload: reloads run one at a time, in the order asked.
    private let reloading = Mutex(())
    private let watcher: Mutex<ConfigWatcher?> = Mutex(nil)
    /// The admin API's listener (``ServerSettings/adminListen``), once started.
    private let adminHTTP: Mutex<HTTPServer?> = Mutex(nil)
    /// The availability shared through Redis (with the Redis store), followed until shutdown.
    private let redisAvailability: RedisAvailability?

    /// The real port, also when the settings asked for port 0.
    package var port: Int { http.port }
    package let host: String

    /// With `serverLog`, events go to it (storage messages at `warn`, the rest at `info`), and so
    /// does a line per request; otherwise events go to `log` and requests are not logged.
    /// A part that cannot start throws, and what started before it is stopped again.
    package init(
        settings: ServerSettings, log plainLog: @escaping @Sendable (String) -> Void = { _ in },
        serverLog: ServerLog? = nil
    ) throws(StartupError) {
        let log = Self.logger(serverLog, .info, otherwise: plainLog)
        let menu: Menu
        do { menu = try Menu(contentsOfFile: settings.configPath) } catch {
            throw .invalidConfig(path: settings.configPath, error)
        }
        let sessions = try settings.sessionBackend(
            menu: MenuGeneration(menu), log: Self.logger(serverLog, .warn, otherwise: plainLog))
        let metrics = MenuMetrics()
        let availabilityKeeper: (any AvailabilityKeeper)?
        do throws(StartupError) {
            availabilityKeeper = try settings.dataDirectory.map { directory throws(StartupError) in
                try AvailabilityFile(directory: directory)
            }
        } catch {
            sessions.shutdown()
            throw error
        }
        // With Redis every instance on the prefix shares one overlay.
        let redisAvailability = settings.redisEndpoint.map { endpoint in
            RedisAvailability(
                endpoint: endpoint, options: RedisOptions(timeout: settings.redisTimeout), prefix: settings.redisPrefix,
                log: Self.logger(serverLog, .warn, otherwise: plainLog))
        }
        self.redisAvailability = redisAvailability
        let service = Self.service(
            settings, store: sessions.store, metrics: metrics, availability: redisAvailability ?? availabilityKeeper)
        if let dropped = Optional(service.current.availability.droppedAtReload), !dropped.isEmpty {
            log("availability: the menu has no node \(dropped.joined(separator: ", ")); their entries were dropped")
        }
        let listeners: (main: HTTPServer, metrics: HTTPServer?)
        do {
            listeners = try Self.listen(
                settings, ObservedService(service: service, metrics: metrics, log: serverLog), metrics: metrics.page)
        } catch {
            sessions.shutdown()
            redisAvailability?.stop()
            throw .cannotListen(error)
        }
        (self.service, self.sessions, self.metrics, self.log) = (service, sessions, metrics, log)
        (http, metricsHTTP, configPath, host) = (listeners.main, listeners.metrics, settings.configPath, settings.host)
        metrics.attach(
            MenuMetrics.Sources(
                service: service, sessions: sessions, servers: [http] + (metricsHTTP.map { [$0] } ?? [])))
        metrics.append { sessions.writeMetrics(to: &$0) }
        if let serverLog {
            metrics.append { serverLog.writeMetrics(to: &$0) }
            serverLog.watch(Self.evictionNotes(of: { sessions.evictedHere }, log: log))
        }
        do throws(StartupError) {
            try startAdmin(settings)
        } catch {
            shutdown(gracePeriod: .zero)
            throw error
        }
        guard settings.watchConfig else { return }
        do {
            let watcher = try ConfigWatcher(path: settings.configPath) { [weak self] in
                self?.reloadLogged(reason: "the config file changed")
            }
            self.watcher.withLock { $0 = watcher }
        } catch {
            shutdown(gracePeriod: .zero)
            throw .cannotWatchConfig(error.description)
        }
    }

    /// The API over `store` with the settings' limits; it serves `GET /metrics` itself unless a
    /// listener of its own does (``ServerSettings/metricsListen``).
    private static func service(
        _ settings: ServerSettings, store: any SessionStore, metrics: MenuMetrics,
        availability: (any AvailabilityKeeper)?
    ) -> MenuAPI {
        MenuAPI(
            store: store, maxLimit: settings.maxLimit, searchSlots: SearchBuildSlots(limit: settings.searchBuilds),
            sessionRateLimiter: settings.sessionRatePerMinute > 0
                ? SessionRateLimiter(perMinute: settings.sessionRatePerMinute) : nil,
            trustedProxy: settings.trustedProxy, metricsPage: settings.metricsListen == nil ? metrics.page : nil,
            crossOriginPolicy: settings.crossOriginPolicy, maxStreams: settings.maxStreams,
            streamHeartbeat: .seconds(settings.streamHeartbeatSeconds),
            reloadEntryWindow: .seconds(settings.reloadEntryWindowSeconds), availabilityKeeper: availability)
    }

    /// The main listener answering through `observed`, and the metrics listener when the settings
    /// name one (the main listener stopped again when that one cannot start).
    private static func listen(
        _ settings: ServerSettings, _ observed: ObservedService,
        metrics page: MetricsPage
    ) throws(HTTPServerError) -> (main: HTTPServer, metrics: HTTPServer?) {
        var configuration = Self.configuration(settings)
        configuration.stoppingResponse = observed.service.reject(.serverStopping)
        let http = try HTTPServer(
            configuration: configuration, replying: { observed.reply(to: $0) }, rejection: { observed.reject($0) })
        do {
            let metricsHTTP = try settings.metricsListen.map { address throws(HTTPServerError) in
                try MenuMetrics.listener(on: address, page: page, like: configuration)
            }
            return (http, metricsHTTP)
        } catch {
            http.shutdown(gracePeriod: .zero)
            throw error
        }
    }

    /// The main listener's settings (its address, threads, limits and timeouts), which the
    /// listeners beside it start from.
    private static func configuration(_ settings: ServerSettings) -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration()
        configuration.host = settings.host
        configuration.port = settings.port
        configuration.threads = settings.threads
        configuration.maxBodyBytes = MenuAPI.maxBodyBytes
        configuration.connectionLimit = settings.maxConnections
        configuration.perIPConnectionLimit = settings.perIPConnections
        configuration.connectionTimeoutSeconds = settings.connectionTimeoutSeconds
        configuration.headerTimeoutSeconds = settings.headerTimeoutSeconds
        configuration.connectionMemoryLimit = settings.connectionMemoryLimit
        configuration.listenBacklog = settings.listenBacklog
        return configuration
    }

    /// Starts the admin API's listener when the settings name one (``AdminAPI``).
    private func startAdmin(_ settings: ServerSettings) throws(StartupError) {
        guard let address = settings.adminListen, let path = settings.adminTokenFile else { return }
        let tokens: AdminTokens
        do throws(AdminTokenFileError) { tokens = try AdminTokens(path: path) } catch { throw .adminTokens(error) }
        let api = AdminAPI(tokens: tokens, log: log, service: service) {
            [weak self] in
            self?.reloadCounted() ?? .failure(.serverStopping)
        }
        do throws(HTTPServerError) {
            let http = try AdminAPI.listener(api, on: address, like: Self.configuration(settings))
            adminHTTP.withLock { $0 = http }
        } catch {
            throw .cannotListen(error)
        }
        metrics.append { api.writeMetrics(to: &$0) }
        log(
            "admin API listening on \(Self.url(host: address.host, port: adminPort ?? address.port)) (\(tokens.tokens.count) token\(tokens.tokens.count == 1 ? "" : "s") from \(path))"
        )
    }

    /// The admin listener's real port (also when asked for port 0); nil without one.
    package var adminPort: Int? { adminHTTP.withLock { $0?.port } }

    /// Re-reads ``configPath`` and, when it holds a valid menu other than the one served, serves
    /// it: requests in flight finish on the old menu, later ones see the new one, and every session
    /// is carried over by id (lazily on its next use, and eagerly here before this returns).
    /// An invalid file changes nothing and throws every problem found, as at start-up. Runs one
    /// reload at a time; never on a request's path.
    @discardableResult
    package func reload() throws(ReloadError) -> MenuReload {
        try reloading.withLock { _ throws(ReloadError) -> MenuReload in
            // What the old menu and the parse freed leaves the resident set (``FreedMemory``).
            defer { FreedMemory.release() }
            let started = ContinuousClock.now
            let old = service.current.generation.menu.version
            let menu: Menu
            do throws(MenuConfigError) { menu = try Menu(contentsOfFile: configPath) } catch {
                throw .invalidConfig(path: configPath, error)
            }
            let loaded = ContinuousClock.now
            guard menu.version != old else {
                return MenuReload(
                    from: old, to: old, nodeCount: menu.nodeCount, load: loaded - started, install: .zero,
                    rebase: .zero, sessions: SessionRebaseReport())
            }
            var previous: ServedMenu? = service.current
            let generation = service.install(menu) { FreedMemory.release() }
            let dropped = service.current.availability.droppedAtReload
            let installed = ContinuousClock.now
            let report = store.adopt(generation)
            // The old menu is freed here, not on an HTTP thread (about 10 ms for the 1.1M-node menu):
            // this thread keeps it until the requests that started on it have returned.
            Self.release(&previous)
            return MenuReload(
                from: old, to: menu.version, nodeCount: menu.nodeCount, load: loaded - started,
                install: installed - loaded, rebase: ContinuousClock.now - installed, sessions: report,
                availabilityDropped: dropped)
        }
    }

    /// Drops `menu` once nothing else holds it, waiting (1 ms at a time, 30 s at most) for the
    /// requests still answering from it; after that wait, whichever holder is last frees it.
    private static func release(_ menu: inout ServedMenu?) {
        let deadline = ContinuousClock.now + .seconds(30)
        while menu != nil, !isKnownUniquelyReferenced(&menu!), ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
        menu = nil
    }

    /// ``reload()``, its outcome logged (SIGHUP and `--watch-config`).
    package func reloadLogged(reason: String) {
        switch reloadCounted() {
        case .success(let reload): log("\(reason): " + reload.summary)
        case .failure(let error): log("\(reason): still serving version \(service.menu.version); \(error.description)")
        }
    }

    /// ``reload()``, its outcome counted in `menu_reloads_total` (SIGHUP, `--watch-config`, the admin API).
    private func reloadCounted() -> Result<MenuReload, ReloadError> {
        do throws(ReloadError) {
            let done = try reload()
            metrics.recordReload(succeeded: true)
            return .success(done)
        } catch {
            metrics.recordReload(succeeded: false)
            return .failure(error)
        }
    }

    /// The line printed when ready: `menu-server listening on http://HOST:PORT`.
    package var listeningLine: String { "menu-server listening on \(Self.url(host: host, port: port))" }

    /// `http://HOST:PORT`, an IPv6 host in brackets.
    private static func url(host: String, port: Int) -> String {
        "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// Stops accepting, lets requests in flight finish (up to `gracePeriod`), then stops.
    package func shutdown(gracePeriod: Duration = .seconds(5)) {
        watcher.withLock { $0 }?.stop()
        service.changeWaits.close()  // long polls answer now: the drain need not wait them out
        http.shutdown(gracePeriod: gracePeriod)
        metricsHTTP?.shutdown(gracePeriod: .zero)
        adminHTTP.withLock { $0 }?.shutdown(gracePeriod: .zero)
        redisAvailability?.stop()
        sessions.shutdown()
    }

    /// Events at `level` to `serverLog`, or to `plain` without one.
    private static func logger(
        _ serverLog: ServerLog?, _ level: LogLevel,
        otherwise plain: @escaping @Sendable (String) -> Void
    ) -> @Sendable (String) -> Void {
        guard let serverLog else { return plain }
        return { serverLog.event(level, $0) }
    }

    /// A watch that logs, at most every 10 s, how many sessions were evicted since its last line.
    private static func evictionNotes(
        of evictions: @escaping @Sendable () -> Int,
        log: @escaping @Sendable (String) -> Void
    ) -> @Sendable () -> Void {
        let noted = Mutex((evicted: evictions(), at: ContinuousClock.now))
        return {
            let evicted = evictions()
            let line: String? = noted.withLock { last in
                guard evicted > last.evicted, ContinuousClock.now - last.at >= .seconds(10) else { return nil }
                defer { last = (evicted, ContinuousClock.now) }
                return
                    "\(evicted - last.evicted) idle session\(evicted - last.evicted == 1 ? "" : "s") evicted for new ones at --max-sessions or --session-memory "
                    + "(\(evicted) since start)"
            }
            if let line { log(line) }
        }
    }
}

/// Why the server could not start.
package enum StartupError: Error, Sendable, CustomStringConvertible {
    case invalidConfig(path: String, MenuConfigError)
    case cannotListen(HTTPServerError)
    case dataDirectory(DurableStoreError)
    case cannotWatchConfig(String)
    case adminTokens(AdminTokenFileError)
    case availabilityFile(path: String, reason: String)

    package var description: String {
        switch self {
        case .availabilityFile(let path, let reason):
            "cannot read the availability kept in \(path): \(reason); fix the file, or remove it to make every node available"
        case .adminTokens(let error): error.description
        case .invalidConfig(let path, let error):
            error.isUnreadableFile ? error.description : "cannot load menu config \(path): \(error.description)"
        case .cannotListen(let error): error.description
        case .dataDirectory(let error): error.description
        case .cannotWatchConfig(let reason): reason
        }
    }
}

/// What a ``RunningServer/reload()`` did.
package struct MenuReload: Sendable {
    /// The version served before and after (equal: the file held the menu already served).
    package var from: String
    package var to: String
    package var nodeCount: Int
    /// Reading and checking the file; encoding the rows and building the translation; carrying
    /// every session over.
    package var load: Duration
    package var install: Duration
    package var rebase: Duration
    package var sessions: SessionRebaseReport
    /// The availability entries of ids the new menu lacks, dropped from the overlay.
    package var availabilityDropped: [String] = []

    package var changed: Bool { from != to }

    /// One line for the log.
    package var summary: String {
        guard changed else { return "config unchanged (version \(to)); nothing to reload" }
        return
            "menu reloaded: version \(from) -> \(to), \(nodeCount) nodes; read in \(Self.ms(load)), served after \(Self.ms(install)) more; "
            + "\(sessions.rebased) session\(sessions.rebased == 1 ? "" : "s") carried over in \(Self.ms(rebase))"
            + (sessions.superseded ? " (a newer reload took over)" : "")
            + (availabilityDropped.isEmpty
                ? ""
                : "; availability dropped for \(availabilityDropped.count) node\(availabilityDropped.count == 1 ? "" : "s") the menu no longer has: "
                    + availabilityDropped.prefix(20).joined(separator: ", "))
    }

    private static func ms(_ duration: Duration) -> String {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return milliseconds < 10 ? String(format: "%.2f ms", milliseconds) : String(format: "%.0f ms", milliseconds)
    }
}

/// Why a reload changed nothing.
package enum ReloadError: Error, Sendable, CustomStringConvertible {
    case invalidConfig(path: String, MenuConfigError)
    /// The server stopped before the reload could run.
    case serverStopping

    package var description: String {
        switch self {
        case .serverStopping: "the server is stopping"
        case .invalidConfig(let path, let error):
            error.isUnreadableFile ? error.description : "cannot reload menu config \(path): \(error.description)"
        }
    }
}
