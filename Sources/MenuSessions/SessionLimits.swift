/// The limits every session store enforces, with their defaults: the one source the stores, the
/// server's settings and its usage text read.
package struct SessionLimits: Sendable, Equatable {
    /// Sessions held at most; a new one beyond evicts the least recently used idle one.
    package var maxSessions = 1_000_000
    /// Idle time after which a session expires (30 days).
    package var timeToLive: Duration = .seconds(30 * 24 * 3600)
    /// Idle time after which a session may be evicted for a new one when the table is full.
    package var evictionIdle: Duration = .seconds(3600)
    /// Groups one session may hold changed from the menu's default at most.
    package var maxChangedGroups = 10_000

    package init() {}

    package init(maxSessions: Int, timeToLive: Duration, evictionIdle: Duration, maxChangedGroups: Int) {
        self.maxSessions = maxSessions
        self.timeToLive = timeToLive
        self.evictionIdle = evictionIdle
        self.maxChangedGroups = maxChangedGroups
    }

    /// The defaults.
    package static let defaults = SessionLimits()
}
