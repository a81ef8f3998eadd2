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
    /// The resident memory all sessions together may cause: 32 MiB, which with the process's own
    /// 20 MB fits a 64 MiB container. The sessions' own bytes (``SessionShard/footprint(of:)``
    /// each) stop at ``heldBytes(ofBudget:)`` of it, the rest covers the allocator's slack. At
    /// that, a new session or a write that may grow one evicts the least recently used idle
    /// sessions, else is refused.
    package var sessionMemory = 32 << 20
    /// The values ``sessionMemory`` may take: 1 MiB to 1 TiB.
    package static let sessionMemoryRange = (1 << 20) ... (1 << 40)
    /// The per-session cap never exceeds this, whatever the budget.
    package static let maxSessionBytesCeiling = 16 << 20

    package init() {}

    package init(
        maxSessions: Int, timeToLive: Duration, evictionIdle: Duration, maxChangedGroups: Int,
        changeHistory: Int = SessionLimits().changeHistory, sessionMemory: Int = SessionLimits().sessionMemory
    ) {
        self.maxSessions = maxSessions
        self.timeToLive = timeToLive
        self.evictionIdle = evictionIdle
        self.maxChangedGroups = maxChangedGroups
        self.changeHistory = changeHistory
        self.sessionMemory = sessionMemory
    }

    /// The bytes sessions may hold together under a budget of `budget`: all but a 16th, which is
    /// kept for what the allocator holds beside them (partly used pages, blocks freed by requests
    /// and not yet reused). Measured after 10,000 sessions of 130 KB churned through a 32 MiB
    /// budget with glibc's mmap threshold fixed at start-up (menu-server does): 4% over the sessions'
    /// bytes (docs/operations.md). `.max` stays `.max` (no budget). O(1).
    package static func heldBytes(ofBudget budget: Int) -> Int {
        budget == .max ? .max : budget - budget / 16
    }

    /// Bytes one session may hold at most: a 64th of ``sessionMemory``, at most 16 MiB. A write
    /// that would take a session past it is refused (``SessionStoreError/sessionTooLarge(limit:)``).
    package var maxSessionBytes: Int { min(sessionMemory / 64, Self.maxSessionBytesCeiling) }

    /// The part of ``maxSessionBytes`` a session's state may take: the rest is kept for its change
    /// history at its largest and its places in the table.
    package var maxStateBytes: Int { Self.maxStateBytes(sessionBytes: maxSessionBytes, changeHistory: changeHistory) }

    /// ``maxStateBytes`` for a per-session cap of `sessionBytes` and a history of `changeHistory` splices.
    package static func maxStateBytes(sessionBytes: Int, changeHistory: Int) -> Int {
        // The history's array may hold up to twice its capacity after growing by doubling; 512
        // bytes cover a session's places in the table's dictionaries.
        max(0, sessionBytes - ChangeHistory.maxHeapBytes(capacity: 2 * changeHistory) - 512)
    }

    /// The defaults.
    package static let defaults = SessionLimits()
}
