import MenuSessions
import MenuSessionsDurable
import MenuSessionsRedis
import RedisClient

/// Where `menu-server` keeps its sessions, besides a data directory (`--data-dir`, the embedded
/// durable store for one instance): this process's memory, or a Redis server that several
/// instances share (`--store redis://…`), so that any of them answers any session.
package enum SessionStoreChoice: Sendable, Equatable {
    case memory
    case redis(RedisEndpoint)
}

extension ServerSettings {
    /// The Redis server `store` names; nil for the memory store.
    package var redisEndpoint: RedisEndpoint? {
        if case .redis(let endpoint) = store { endpoint } else { nil }
    }

    /// `--redis-timeout` as the Redis client takes it.
    package var redisTimeout: Duration { .milliseconds(redisTimeoutMilliseconds) }

    /// The Redis store's options these settings name: the prefix, the timeout, the cache, and
    /// the session limits the other stores take (`--session-ttl`, `--max-changed-groups`,
    /// `--change-history`, and `--max-sessions`, `--session-evict-idle` and `--session-memory`
    /// across every instance on the prefix, `--session-memory` also for what this instance keeps),
    /// the cache's
    /// `--redis-cache-max-age` and `--redis-pipeline`.
    package var redisStoreOptions: RedisStoreOptions {
        var options = RedisStoreOptions(
            prefix: redisPrefix, sessionTTL: .seconds(sessionTTLSeconds), redis: RedisOptions(timeout: redisTimeout),
            trackingCache: redisCache, maxChangedGroups: maxChangedGroups, historyLimit: changeHistory)
        options.cacheMaxAge = .seconds(redisCacheMaxAgeSeconds)
        options.pipelinedWrites = redisPipeline
        options.sessionMemory = sessionMemory
        options.maxSessions = maxSessions
        options.evictionIdle = .seconds(sessionEvictIdleSeconds)
        return options
    }

    /// The start-up line of a Redis store: where (the password never shown) and how.
    func redisStorageDescription(_ endpoint: RedisEndpoint) -> String {
        "sessions are kept in Redis at \(endpoint) (key prefix \(redisPrefix), timeout \(redisTimeoutMilliseconds) ms, "
            + "client-side cache \(redisCache ? "on" : "off"), pipelined writes \(redisPipeline ? "on" : "off")), shared by every instance on it"
    }

    /// Refuses a Redis store together with a data directory: sessions live in one place.
    func checkStoreChoice() throws(SettingsError) {
        guard redisEndpoint != nil, dataDirectory != nil else { return }
        throw .conflicting(
            "--data-dir (MENU_DATA_DIR)", "a Redis --store (MENU_STORE)",
            reason: "sessions are kept either on this disk or in Redis; drop one of them")
    }
}
