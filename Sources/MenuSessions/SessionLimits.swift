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
    /// Splices each session keeps for `GET /changes` (``ChangeHistory``; 12 bytes each).
    package var changeHistory = 64
    /// The values ``changeHistory`` may take.
    package static let changeHistoryRange = 0 ... 4096

    package init() {}

    package init(maxSessions: Int, timeToLive: Duration, evictionIdle: Duration, maxChangedGroups: Int,
                 changeHistory: Int = SessionLimits().changeHistory) {
        self.maxSessions = maxSessions
        self.timeToLive = timeToLive
        self.evictionIdle = evictionIdle
        self.maxChangedGroups = maxChangedGroups
        self.changeHistory = changeHistory
    }

    /// The defaults.
    package static let defaults = SessionLimits()
}
