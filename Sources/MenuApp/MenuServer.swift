import Foundation
import HTTPCore
import HTTPServer
import MenuService
import MenuSessions
import MenuSessionsDurable
import MenuSessionsRedis
import Metrics
import MenuModel
import Synchronization

/// A running menu-server: the menu loaded from settings, the session store, the routing service
/// and the HTTP listener. Start with ``init(settings:log:)``; reload the menu with ``reload()``
/// (SIGHUP, `--watch-config`); stop with ``shutdown(gracePeriod:)``.
package final class MenuServer: Sendable {
    package let service: MenuService
    package let store: any SessionStore
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
    /// The on-disk store when the settings name a data directory (closed by ``shutdown(gracePeriod:)``).
    package let durableStore: DurableSessionStore?
    /// The Redis store when the settings name one (stopped by ``shutdown(gracePeriod:)``).
    package let redisStore: RedisSessionStore?
    /// One line for the log saying where sessions are kept.
    package let storageDescription: String

    /// The real port, also when the settings asked for port 0.
    package var port: Int { http.port }
    package let host: String

    /// With `serverLog`, events go to it (storage messages at `warn`, the rest at `info`), and so
    /// does a line per request; otherwise events go to `log` and requests are not logged.
    package init(settings: ServerSettings, log plainLog: @escaping @Sendable (String) -> Void = { _ in },
                 serverLog: ServerLog? = nil) throws(StartupError) {
        let log = Self.logger(serverLog, .info, otherwise: plainLog)
        let storageLog = Self.logger(serverLog, .warn, otherwise: plainLog)
        let menu: Menu
        do { menu = try Menu(contentsOfFile: settings.configPath) } catch { throw .invalidConfig(path: settings.configPath, error) }
        let store: any SessionStore
        if let directory = settings.dataDirectory {
            let durable: DurableSessionStore
            do {
                durable = try DurableSessionStore(directory: directory, menu: MenuGeneration(menu), fsync: settings.fsync,
                                                  limits: settings.sessionLimits,
                                                  storeTimeout: .seconds(settings.storeTimeoutSeconds), log: storageLog)
            } catch {
                throw .dataDirectory(error)
            }
            durableStore = durable
            redisStore = nil
            store = MeasuredSessionStore(durable)
            storageDescription = "sessions are kept in \(directory) (journal fsync: \(settings.fsync.rawValue)); "
                + durable.recovery.summary
        } else if let endpoint = settings.redisEndpoint {
            let redis = RedisSessionStore(endpoint: endpoint, options: settings.redisStoreOptions, menu: MenuGeneration(menu))
            durableStore = nil
            redisStore = redis
            store = MeasuredSessionStore(redis)
            storageDescription = settings.redisStorageDescription(endpoint)
        } else {
            durableStore = nil
            redisStore = nil
            store = InMemorySessionStore(menu: MenuGeneration(menu), limits: settings.sessionLimits)
            storageDescription = "sessions are kept in memory only; they are lost on restart"
        }
        self.store = store
        configPath = settings.configPath
        self.log = log
        let metrics = MenuMetrics()
        self.metrics = metrics
        let service = MenuService(
            store: store, maxLimit: settings.maxLimit, searchSlots: SearchBuildSlots(limit: settings.searchBuilds),
            sessionRateLimiter: settings.sessionRatePerMinute > 0 ? SessionRateLimiter(perMinute: settings.sessionRatePerMinute) : nil,
            trustedProxy: settings.trustedProxy, metricsPage: settings.metricsListen == nil ? metrics.page : nil,
            crossOriginPolicy: settings.crossOriginPolicy)
        let observed = ObservedService(service: service, metrics: metrics, log: serverLog)
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
        configuration.stoppingResponse = service.reject(.serverStopping)
        do {
            http = try HTTPServer(configuration: configuration,
                                  replying: { observed.reply(to: $0) },
                                  rejection: { observed.reject($0) })
        } catch {
            durableStore?.close()
            redisStore?.stop()
            throw .cannotListen(error)
        }
        do {
            metricsHTTP = try settings.metricsListen.map { address throws(HTTPServerError) in
                try MenuMetrics.listener(on: address, page: metrics.page, like: configuration)
            }
        } catch {
            http.shutdown(gracePeriod: .zero)
            durableStore?.close()
            redisStore?.stop()
            throw .cannotListen(error)
        }
        metrics.attach(MenuMetrics.Sources(
            service: service, sessionCounts: Self.sessionCounts(of: store), durability: store as? MeasuredSessionStore,
            servers: [http] + (metricsHTTP.map { [$0] } ?? [])))
        if let redisStore, settings.redisPipeline {
            metrics.append { out in
                let figures = redisStore.pipelineFigures
                out.single("menu_redis_pipeline_batches_total", .counter,
                           help: "Batches of session writes sent to Redis through the write pipeline (--redis-pipeline).", figures.batches)
                out.single("menu_redis_pipeline_writes_total", .counter,
                           help: "Session writes those batches carried: divided by the batches, the mean batch.", figures.commands)
            }
        }
        if let serverLog {
            metrics.append { serverLog.writeMetrics(to: &$0) }
            serverLog.watch(Self.evictionNotes(of: Self.evictionsHere(of: store), log: log))
        }
        self.service = service
        self.host = settings.host
        if settings.watchConfig {
            do {
                let watcher = try ConfigWatcher(path: settings.configPath) { [weak self] in self?.reloadLogged(reason: "the config file changed") }
                self.watcher.withLock { $0 = watcher }
            } catch {
                http.shutdown(gracePeriod: .zero)
                metricsHTTP?.shutdown(gracePeriod: .zero)
                durableStore?.close()
                redisStore?.stop()
                throw .cannotWatchConfig(error.description)
            }
        }
    }

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
            do throws(MenuConfigError) { menu = try Menu(contentsOfFile: configPath) } catch { throw .invalidConfig(path: configPath, error) }
            let loaded = ContinuousClock.now
            guard menu.version != old else {
                return MenuReload(from: old, to: old, nodeCount: menu.nodeCount, load: loaded - started, install: .zero,
                                  rebase: .zero, sessions: SessionRebaseReport())
            }
            var previous: ServedMenu? = service.current
            let generation = service.install(menu)
            let installed = ContinuousClock.now
            let report = store.adopt(generation)
            // The old menu is freed here, not on an HTTP thread (about 10 ms for the 1.1M-node menu):
            // this thread keeps it until the requests that started on it have returned.
            Self.release(&previous)
            return MenuReload(from: old, to: menu.version, nodeCount: menu.nodeCount, load: loaded - started,
                              install: installed - loaded, rebase: ContinuousClock.now - installed, sessions: report)
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
        do {
            log("\(reason): " + (try reload()).summary)
            metrics.recordReload(succeeded: true)
        } catch {
            log("\(reason): still serving version \(service.menu.version); \(error.description)")
            metrics.recordReload(succeeded: false)
        }
    }

    /// The line printed when ready: `menu-server listening on http://HOST:PORT`.
    package var listeningLine: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "menu-server listening on http://\(shownHost):\(port)"
    }

    /// Stops accepting, lets requests in flight finish (up to `gracePeriod`), then stops.
    package func shutdown(gracePeriod: Duration = .seconds(5)) {
        watcher.withLock { $0 }?.stop()
        http.shutdown(gracePeriod: gracePeriod)
        metricsHTTP?.shutdown(gracePeriod: .zero)
        durableStore?.close()
        redisStore?.stop()
    }

    /// Events at `level` to `serverLog`, or to `plain` without one.
    private static func logger(_ serverLog: ServerLog?, _ level: LogLevel,
                               otherwise plain: @escaping @Sendable (String) -> Void) -> @Sendable (String) -> Void {
        guard let serverLog else { return plain }
        return { serverLog.event(level, $0) }
    }

    /// A watch that logs, at most every 10 s, how many sessions were evicted since its last line.
    private static func evictionNotes(of evictions: @escaping @Sendable () -> Int,
                                      log: @escaping @Sendable (String) -> Void) -> @Sendable () -> Void {
        let noted = Mutex((evicted: evictions(), at: ContinuousClock.now))
        return {
            let evicted = evictions()
            let line: String? = noted.withLock { last in
                guard evicted > last.evicted, ContinuousClock.now - last.at >= .seconds(10) else { return nil }
                defer { last = (evicted, ContinuousClock.now) }
                return "\(evicted - last.evicted) idle session\(evicted - last.evicted == 1 ? "" : "s") evicted for new ones at --max-sessions or --session-memory "
                    + "(\(evicted) since start)"
            }
            if let line { log(line) }
        }
    }

    /// The sessions this process evicted since start, read without waiting on anything (the log
    /// writer's thread reads it every second): a table's count, or the Redis store's own.
    private static func evictionsHere(of store: any SessionStore) -> @Sendable () -> Int {
        if let redis = ((store as? MeasuredSessionStore)?.base ?? store) as? RedisSessionStore {
            return { redis.evictedHere }  // its sessionCounts ask Redis
        }
        let counts = sessionCounts(of: store)
        return { counts().evicted }
    }

    /// How a scrape reads the sessions' figures from the concrete store.
    private static func sessionCounts(of store: any SessionStore) -> @Sendable () -> SessionCounts {
        switch (store as? MeasuredSessionStore)?.base ?? store {
        case let memory as InMemorySessionStore: { memory.sessionCounts }
        case let durable as DurableSessionStore: { durable.sessionCounts }
        case let redis as RedisSessionStore: { redis.sessionCounts }
        default: { SessionCounts() }
        }
    }
}

/// Why the server could not start.
package enum StartupError: Error, Sendable, CustomStringConvertible {
    case invalidConfig(path: String, MenuConfigError)
    case cannotListen(HTTPServerError)
    case dataDirectory(DurableStoreError)
    case cannotWatchConfig(String)

    package var description: String {
        switch self {
        case .invalidConfig(let path, let error):
            error.isUnreadableFile ? error.description : "cannot load menu config \(path): \(error.description)"
        case .cannotListen(let error): error.description
        case .dataDirectory(let error): error.description
        case .cannotWatchConfig(let reason): reason
        }
    }
}

/// What a ``MenuServer/reload()`` did.
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

    package var changed: Bool { from != to }

    /// One line for the log.
    package var summary: String {
        guard changed else { return "config unchanged (version \(to)); nothing to reload" }
        return "menu reloaded: version \(from) -> \(to), \(nodeCount) nodes; read in \(Self.ms(load)), served after \(Self.ms(install)) more; "
            + "\(sessions.rebased) session\(sessions.rebased == 1 ? "" : "s") carried over in \(Self.ms(rebase))"
            + (sessions.superseded ? " (a newer reload took over)" : "")
    }

    private static func ms(_ duration: Duration) -> String {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return milliseconds < 10 ? String(format: "%.2f ms", milliseconds) : String(format: "%.0f ms", milliseconds)
    }
}

/// Why a reload changed nothing.
package enum ReloadError: Error, Sendable, CustomStringConvertible {
    case invalidConfig(path: String, MenuConfigError)

    package var description: String {
        switch self {
        case .invalidConfig(let path, let error):
            error.isUnreadableFile ? error.description : "cannot reload menu config \(path): \(error.description)"
        }
    }
}
