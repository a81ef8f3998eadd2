import MenuModel

/// The last splices of one session, newest last: what `GET /changes?since=R` answers, so a client
/// whose write got 412, or a second device, brings its rows up to date instead of reloading.
///
/// Entry `k` of ``splices`` took the session from revision `firstRevision + k - 1` to
/// `firstRevision + k`; revisions are consecutive, because every revision is one write that
/// changed the state. A write of a hidden group is an entry with no splice.
///
/// Invariant: ``endRevision`` is the session's revision; ``splices`` holds at most the capacity
/// given to ``record(_:capacity:)`` entries (older ones are dropped); a carry-over to a newer menu
/// empties it (its row positions belong to the old menu). Memory: 8 bytes a splice, allocated as
/// writes happen (a session that never writes holds an empty array): 512 bytes at the default
/// capacity of 64. Cost: a record O(capacity) at worst (one shift of at most 512 bytes), a read
/// O(entries answered).
package struct ChangeHistory: Sendable, Equatable {
    /// `at << 32 | (inserted - removed)` as 32-bit halves; 0 for no splice (`at` is at least 1).
    private var splices: [UInt64] = []
    /// The revision after the newest entry (the session's revision).
    package private(set) var endRevision: Int

    /// An empty history of a session at `revision`.
    package init(revision: Int) {
        endRevision = revision
    }

    /// The revision the history starts from: a `since` older than this cannot be answered.
    package var startRevision: Int { endRevision - splices.count }

    /// Records the splice of a write that moved the session to the next revision, keeping the
    /// newest `capacity` entries.
    package mutating func record(_ change: RowChange?, capacity: Int) {
        endRevision += 1
        guard capacity > 0 else {
            splices = []
            return
        }
        if splices.count >= capacity { splices.removeFirst(splices.count - capacity + 1) }
        splices.append(change.map { UInt64(UInt32(truncatingIfNeeded: $0.at)) << 32 | UInt64(UInt32(bitPattern: Int32(truncatingIfNeeded: $0.inserted - $0.removed))) } ?? 0)
    }

    /// Forgets every splice (a carry-over to another menu), keeping the revision.
    package mutating func clear() {
        splices = []
    }

    /// The entries from revision `since` to now, oldest first; nil when `since` is older than
    /// ``startRevision`` (gone) or newer than ``endRevision``.
    package func entries(since: Int) -> [(revision: Int, change: RowChange?)]? {
        guard since >= startRevision, since <= endRevision else { return nil }
        let first = since - startRevision
        return splices[first...].enumerated().map { offset, packed in
            let revision = since + offset + 1
            guard packed != 0 else { return (revision, nil) }
            let at = Int(packed >> 32)
            let delta = Int(Int32(bitPattern: UInt32(truncatingIfNeeded: packed)))
            return (revision, RowChange(at: at, inserted: max(delta, 0), removed: max(-delta, 0)))
        }
    }
}

/// What ``SessionStore/changes(of:since:in:)`` answers: the session's revision and the entries
/// since the asked revision, or nil entries when the history no longer reaches back that far.
package struct SessionChanges: Sendable {
    package var revision: Int
    package var entries: [(revision: Int, change: RowChange?)]?

    package init(revision: Int, entries: [(revision: Int, change: RowChange?)]?) {
        self.revision = revision
        self.entries = entries
    }
}
