// The stores the conformance suite runs against: each made on the same menu with the same limits,
// and stopped (its directory removed, its redis-server stopped) when the test is done.

import DurableTestSupport
import HTTPTestSupport
import MenuModel
import MenuSessions
import MenuSessionsDurable
import RedisClient
import RedisTestSupport
import Testing

@testable import MenuSessionsRedis

/// One kind of ``SessionStore``: the argument of every conformance test.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `InMemorySessionStore`.
    case memory
    /// `DurableSessionStore` in a temporary directory (fsync off: durability is tested elsewhere).
    case durable
    /// `RedisSessionStore` on a redis-server of the test's own, with its tracking cache.
    case redis
    /// `RedisSessionStore` without the cache: every read goes to Redis.
    case redisUncached

    var testDescription: String { rawValue }
}

/// A store of one kind; ``stop()`` it in a `defer`.
final class StoreUnderTest {
    let store: any SessionStore
    /// The sessions the store holds (expired ones until they are removed); nil for Redis, whose
    /// keys expire on their own.
    let heldCount: (() -> Int)?
    private let stopping: () -> Void

    /// A store of `kind` on `menu` refusing a state with more than `maxChangedGroups` changed
    /// groups and keeping the last `historyLimit` splices of each session. With `clock`, the
    /// memory and durable stores tell time by it, and a session idle for `timeToLive` expires.
    init(
        _ kind: StoreKind, menu: Menu, maxChangedGroups: Int = 100, historyLimit: Int = 64,
        timeToLive: Duration = SessionLimits.defaults.timeToLive, clock: DurableTestClock? = nil
    ) throws {
        let generation = MenuGeneration(menu)
        var limits = SessionLimits.defaults
        limits.maxChangedGroups = maxChangedGroups
        limits.changeHistory = historyLimit
        limits.timeToLive = timeToLive
        switch kind {
        case .memory:
            let memory = InMemorySessionStore(menu: generation, limits: limits, clock: clock?.clock ?? SessionClock.now)
            store = memory
            heldCount = { memory.count }
            stopping = {}
        case .durable:
            let directory = DurableTemporaryDirectory()
            let durable = try DurableSessionStore(
                directory: directory.path, menu: generation, fsync: .no, limits: limits,
                clock: clock?.clock ?? SessionClock.now,
                wallClock: clock?.wall ?? DurableSessionStore.milliseconds)
            store = durable
            heldCount = { durable.count }
            stopping = {
                durable.close()
                directory.remove()
            }
        case .redis, .redisUncached:
            let server = try RedisServerProcess()
            let cache = kind == .redis
            var options = RedisStoreOptions(
                redis: RedisOptions(
                    timeout: .milliseconds(300), initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(100)),
                trackingCache: cache, maxChangedGroups: maxChangedGroups, historyLimit: historyLimit)
            options.prefix = "test:"
            options.cacheMaxAge = .seconds(3600)
            let redis = RedisSessionStore(endpoint: server.endpoint, options: options, menu: generation)
            store = redis
            heldCount = nil
            stopping = {
                redis.stop()
                server.stop()
            }
            if cache {
                try #require(eventually { redis.cache?.tracking != nil }, "the invalidation listener did not subscribe")
            }
        }
    }

    func stop() { stopping() }
}
