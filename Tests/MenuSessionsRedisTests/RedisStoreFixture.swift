import HTTPTestSupport
import MenuModel
import MenuSessions
import NaiveReference
import RedisClient
import RedisTestSupport
import Testing

@testable import MenuSessionsRedis

/// A redis-server of the test's own and the stores made on it, each stopped with the fixture.
final class RedisStoreFixture: @unchecked Sendable {
    let server: RedisServerProcess
    private var stores: [RedisSessionStore] = []

    init(appendOnly: Bool = false) throws {
        server = try RedisServerProcess(appendOnly: appendOnly)
    }

    /// A store on `menu` (a generation of its own, as a separate instance would have); with the
    /// cache, returns once its listener is subscribed, so reads are cached from the first.
    /// `cacheMaxAge` is an hour unless given: what reaches the cache in a test comes through
    /// tracking, not through the copy's age running out.
    func store(
        _ menu: MenuGeneration, cache: Bool = true, maxChangedGroups: Int = 100, historyLimit: Int = 64,
        timeout: Duration = .milliseconds(300), ttl: Duration? = .seconds(86_400),
        cacheMaxAge: Duration = .seconds(3600), pipelined: Bool = true,
        maxSessions: Int = SessionLimits.defaults.maxSessions,
        evictionIdle: Duration = SessionLimits.defaults.evictionIdle,
        cacheCapacity: Int = RedisStoreOptions().cacheCapacity,
        sessionMemory: Int = SessionLimits.defaults.sessionMemory
    ) throws -> RedisSessionStore {
        var options = RedisStoreOptions(
            redis: RedisOptions(timeout: timeout, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(100)),
            trackingCache: cache, maxChangedGroups: maxChangedGroups, historyLimit: historyLimit)
        options.prefix = "test:"
        options.sessionTTL = ttl
        options.cacheMaxAge = cacheMaxAge
        options.pipelinedWrites = pipelined
        options.maxSessions = maxSessions
        options.cacheCapacity = cacheCapacity
        options.evictionIdle = evictionIdle
        options.sessionMemory = sessionMemory
        let store = RedisSessionStore(endpoint: server.endpoint, options: options, menu: menu)
        stores.append(store)
        if cache {
            try #require(eventually { store.cache?.tracking != nil }, "the invalidation listener did not subscribe")
        }
        return store
    }

    /// Calls of each command since start; the INFO call reading them counts under "info".
    func calls(_ names: [String] = ["hmget", "pttl", "evalsha", "hget", "hset", "pexpire"]) -> [String: Int] {
        let all = server.commandCalls()
        return Dictionary(uniqueKeysWithValues: names.map { ($0, all[$0] ?? 0) })
    }

    /// Whether `store` comes to read `id` without a Redis command (a first read may fill the cache).
    func readsFromCache(_ store: RedisSessionStore, _ id: SessionID) -> Bool {
        eventually {
            let before = calls()
            _ = try? store.snapshot(of: id)
            return calls() == before
        }
    }

    deinit {
        for store in stores { store.stop() }
        server.stop()
    }
}
