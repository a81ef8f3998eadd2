import MenuSessionsDurable
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

    /// Refuses a Redis store together with a data directory: sessions live in one place.
    func checkStoreChoice() throws(SettingsError) {
        guard redisEndpoint != nil, dataDirectory != nil else { return }
        throw .conflicting("--data-dir (MENU_DATA_DIR)", "a Redis --store (MENU_STORE)",
                           reason: "sessions are kept either on this disk or in Redis; drop one of them")
    }
}
