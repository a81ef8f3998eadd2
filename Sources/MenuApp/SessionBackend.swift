import MenuModel
import MenuSessions
import Metrics

/// Where a running server keeps its sessions, as the composition root sees it: the store the
/// service calls, one line saying where sessions are kept, the figures a scrape reports, and how
/// to let go of the store. One implementation per store: ``MemorySessionBackend``,
/// ``DurableSessionBackend``, ``RedisSessionBackend``; ``ServerSettings/sessionBackend(menu:log:)``
/// picks one from the settings. Readiness is the store's own
/// (``SessionStore/readinessProblem()``, asked by the service).
///
/// Invariant: ``store`` answers for the backend's whole life; after ``shutdown()`` nothing calls it.
/// Cost: the figures are read by a scrape or the log writer's thread, never on a request's path.
package protocol SessionBackend: Sendable {
    /// The store the service calls (measured for metrics where the backend counts its writes).
    var store: any SessionStore { get }
    /// One line for the log saying where sessions are kept.
    var description: String { get }
    /// The sessions' figures at one moment, for `GET /metrics`.
    var sessionCounts: SessionCounts { get }
    /// The sessions this process evicted since start, read without waiting on anything (the log
    /// writer's thread reads it every second).
    var evictedHere: Int { get }
    /// The writes that waited for the store and the calls it refused as unavailable (zero for a
    /// store in memory).
    var storeFigures: MeasuredSessionStore.Figures { get }
    /// Families this store adds to every scrape, after the common ones (none by default).
    func writeMetrics(to out: inout PrometheusText)
    /// Lets go of the store: the journal closed, the Redis threads stopped. Called once, last.
    func shutdown()
}

extension SessionBackend {
    package var evictedHere: Int { sessionCounts.evicted }
    package var storeFigures: MeasuredSessionStore.Figures { MeasuredSessionStore.Figures() }
    package func writeMetrics(to out: inout PrometheusText) {}
    package func shutdown() {}
}

extension ServerSettings {
    /// The backend these settings name: a data directory (`--data-dir`), a Redis server
    /// (`--store redis://…`), or this process's memory; its store serves `menu` first.
    package func sessionBackend(menu: MenuGeneration, log: @escaping @Sendable (String) -> Void) throws(StartupError)
        -> any SessionBackend
    {
        if let directory = dataDirectory {
            return try DurableSessionBackend(directory: directory, settings: self, menu: menu, log: log)
        }
        if let endpoint = redisEndpoint {
            return RedisSessionBackend(endpoint: endpoint, settings: self, menu: menu)
        }
        return MemorySessionBackend(settings: self, menu: menu)
    }
}
