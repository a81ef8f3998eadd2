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
/// empties it (its row positions belong to the old menu). Memory: 12 bytes a splice (a recursive
/// change or a reset both removes and inserts rows, so both counts are kept), allocated as writes
/// happen (a session that never writes holds an empty array): 768 bytes at the default capacity
/// of 64. Cost: a record O(capacity) at worst (one shift of at most 768 bytes), a read O(entries
/// answered).
package struct ChangeHistory: Sendable, Equatable {
    /// One entry: a splice as three 32-bit counts, or no splice (``none``). A table has fewer than
    /// 2^32 rows (menus are indexed by `Int32`).
    private struct Splice: Equatable {
        var at: UInt32
        var inserted: UInt32
        var removed: UInt32

        /// A write of a hidden group: no row changed.
        static let none = Splice(at: .max, inserted: 0, removed: 0)
    }

    private var splices: [Splice] = []
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
        splices.append(
            change.map {
                Splice(
                    at: UInt32(truncatingIfNeeded: $0.at), inserted: UInt32(truncatingIfNeeded: $0.inserted),
                    removed: UInt32(truncatingIfNeeded: $0.removed))
            } ?? .none)
    }

    /// The bytes the splices hold on the heap (``MenuModel/heapBytes(of:)``). O(1).
    package var heapBytes: Int { MenuModel.heapBytes(of: splices) }

    /// The most ``heapBytes`` a history of `capacity` splices holds.
    package static func maxHeapBytes(capacity: Int) -> Int {
        MenuModel.heapBytes(ofCapacity: capacity, of: Splice.self)
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
        return splices[first...].enumerated().map { offset, splice in
            let revision = since + offset + 1
            guard splice != .none else { return (revision, nil) }
            return (
                revision, RowChange(at: Int(splice.at), inserted: Int(splice.inserted), removed: Int(splice.removed))
            )
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
