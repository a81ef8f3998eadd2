import MenuSessions
import RedisClient

/// How a ``RedisSessionStore`` keeps sessions in Redis: the key prefix, the idle time to live,
/// the connection options, whether reads are cached (client-side caching, invalidated by Redis),
/// the change limit, the history kept for `GET /changes`, and the cache's bound.
package struct RedisStoreOptions: Sendable {
    /// Keys are `<prefix>s:<sessionID>`; instances sharing sessions use one prefix.
    package var prefix = "menu:"
    /// Idle time after which Redis drops a session (PEXPIRE), refreshed on use; nil: never.
    package var sessionTTL: Duration? = .seconds(86_400)
    package var redis = RedisOptions()
    /// Serve repeated reads from a per-instance cache Redis invalidates (CLIENT TRACKING).
    package var trackingCache = true
    /// Groups one session may hold changed from the menu's default at most.
    package var maxChangedGroups: Int
    /// Splices each session keeps for `GET /changes` (12 bytes each, in its Redis record).
    package var historyLimit = SessionLimits.defaults.changeHistory
    /// Sessions the prefix holds at most, across every instance (``SessionLimits/maxSessions``).
    package var maxSessions = SessionLimits.defaults.maxSessions
    /// Idle time after which a session may be evicted for a new one at ``maxSessions``.
    package var evictionIdle = SessionLimits.defaults.evictionIdle
    /// Sessions the cache holds at most.
    package var cacheCapacity = 100_000
    /// Resident memory this instance's copies of sessions may cause (``SessionLimits/sessionMemory``):
    /// of the bytes they may hold (``SessionLimits/heldBytes(ofBudget:)``), three quarters for the
    /// cache, a quarter for the last copies it wrote; a session's state a 64th of the budget.
    package var sessionMemory = SessionLimits.defaults.sessionMemory
    /// Compare-and-set rounds a write tries, at the least, before it gives up; it goes on trying
    /// until the Redis timeout has passed as well (another instance won each one:
    /// writes of one session on one instance queue for each other, so each round has at most one
    /// contender per instance, each round costs one round trip, and some writer wins every round).
    package var writeAttempts = 64
    /// How long a cached session is served without Redis confirming it: the bound on staleness
    /// should Redis drop a connection whose reads it tracks without this instance noticing
    /// (tracking itself reports every change at once). After it, the next read costs one round trip.
    package var cacheMaxAge: Duration = .seconds(10)
    /// Send writes that need no read through a ``RedisPipeline`` (``PipelinedSessionStore``), so
    /// that an HTTP thread serves other requests during their round trip and the writes of many
    /// requests share one; off: each write holds its thread for its round trip.
    package var pipelinedWrites = true

    /// Bytes one session's state may hold (``SessionLimits/maxStateBytes``).
    package var maxStateBytes: Int {
        SessionLimits.maxStateBytes(
            sessionBytes: min(sessionMemory / 64, SessionLimits.maxSessionBytesCeiling), changeHistory: historyLimit)
    }

    package init(
        prefix: String = "menu:", sessionTTL: Duration? = .seconds(86_400), redis: RedisOptions = RedisOptions(),
        trackingCache: Bool = true, maxChangedGroups: Int = SessionLimits.defaults.maxChangedGroups,
        historyLimit: Int = SessionLimits.defaults.changeHistory
    ) {
        self.prefix = prefix
        self.sessionTTL = sessionTTL
        self.redis = redis
        self.trackingCache = trackingCache
        self.maxChangedGroups = maxChangedGroups
        self.historyLimit = historyLimit
    }
}
