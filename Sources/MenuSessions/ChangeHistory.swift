import MenuModel

/// The last splices of one session, newest last: what `GET /changes?since=R` answers, so a client
/// whose write got 412, or a second device, brings its rows up to date instead of reloading.
///
/// Entry `k` of ``splices`` took the session from revision `firstRevision + k - 1` to
/// `firstRevision + k`; revisions are consecutive, because every revision is one write that
/// changed the state. A write of a hidden group is an entry with no splice.
///
/// A carry-over to the next menu is an entry too (``recordReload(_:capacity:)``): a
/// ``ReloadMark``, from which the reload's splices are computed when a client asks for them (the
/// entries before it stay, in the old menu's positions). Only the newest reload's splices can be
/// computed (the menu before it is freed by the next), so the next carry-over forgets every entry
/// up to the older mark; one past several menus at once is one revision per menu and forgets the
/// entries (``skipReloads(_:)``).
///
/// Invariant: ``endRevision`` is the session's revision; ``splices`` holds at most the capacity
/// given to ``record(_:capacity:)`` entries (older ones are dropped) and at most one
/// ``Splice/reload`` entry, whose mark is ``reload``. Memory: 12 bytes a splice (a recursive
/// change or a reset both removes and inserts rows, so both counts are kept), allocated as writes
/// happen (a session that never writes holds an empty array): 768 bytes at the default capacity of
/// 64; a mark adds the state it keeps (``heapBytes``). Cost: a record O(capacity) at worst (one
/// shift of at most 768 bytes), a read O(entries answered).
package struct ChangeHistory: Sendable, Equatable {
    /// One entry: the three words of a ``HistoryEntry``, or a reload (``reload``). A table has fewer than
    /// 2^32 rows (menus are indexed by `Int32`).
    private struct Splice: Equatable {
        var at: UInt32
        var inserted: UInt32
        var removed: UInt32

        /// A carry-over to the next menu: its mark is in ``reloads``.
        static let reload = Splice(at: HistoryEntry.reloadWord, inserted: 0, removed: 0)
    }

    private var splices: [Splice] = []
    /// The mark of the ``Splice/reload`` entry of ``splices``, if it has one.
    private var reload: ReloadMark?
    /// The revision after the newest entry (the session's revision).
    package private(set) var endRevision: Int

    /// An empty history of a session at `revision`.
    package init(revision: Int) {
        endRevision = revision
    }

    /// The revision the history starts from: a `since` older than this cannot be answered.
    package var startRevision: Int { endRevision - splices.count }

    /// Records what a write that moved the session to the next revision left (a splice, or rows
    /// reconfigured), keeping the newest `capacity` entries.
    package mutating func record(_ entry: HistoryEntry, capacity: Int) {
        forgetUnanswerableReload()
        endRevision += 1
        let words = entry.words
        append(Splice(at: words.at, inserted: words.inserted, removed: words.removed), capacity: capacity)
    }

    /// Records a carry-over to the next menu as the next revision: its entry is computed from
    /// `mark` when read. The entries up to an older mark are forgotten: that reload's menu is
    /// freed by this one, so a `since` before it is gone anyway.
    package mutating func recordReload(_ mark: ReloadMark, capacity: Int) {
        forgetThroughReload()
        endRevision += 1
        append(.reload, capacity: capacity)
        if capacity > 0 { reload = mark }
    }

    /// Records a carry-over past `count` menus at once: `count` revisions whose entries no one
    /// can compute, so every entry before is gone too.
    package mutating func skipReloads(_ count: Int) {
        endRevision += count
        clear()
    }

    /// Forgets the entries up to and including the reload entry, if there is one.
    private mutating func forgetThroughReload() {
        guard let last = splices.lastIndex(of: .reload) else { return }
        splices.removeFirst(last + 1)
        reload = nil
    }

    /// Forgets the reload entry (and the entries before it) once its splices can no longer be
    /// computed (``ReloadMark/canBeAnswered``: the window ran out), so the state it keeps is freed
    /// at the session's next write rather than at the next reload.
    private mutating func forgetUnanswerableReload() {
        if let reload, !reload.canBeAnswered { forgetThroughReload() }
    }

    private mutating func append(_ splice: Splice, capacity: Int) {
        guard capacity > 0 else {
            clear()
            return
        }
        if splices.count >= capacity {
            let dropped = splices.count - capacity + 1
            if splices[..<dropped].contains(.reload) { reload = nil }
            splices.removeFirst(dropped)
        }
        splices.append(splice)
    }

    /// The bytes the splices and the mark's state hold on the heap (``MenuModel/heapBytes(of:)``).
    package var heapBytes: Int {
        MenuModel.heapBytes(of: splices) + (reload?.state.heapBytes ?? 0)
    }

    /// The most ``heapBytes`` a history of `capacity` splices holds.
    package static func maxHeapBytes(capacity: Int) -> Int {
        MenuModel.heapBytes(ofCapacity: capacity, of: Splice.self)
    }

    /// Forgets every entry, keeping the revision.
    package mutating func clear() {
        splices = []
        reload = nil
    }

    /// The entries from revision `since` to now, oldest first; nil when `since` is older than
    /// ``startRevision`` (gone) or newer than ``endRevision``.
    package func entries(since: Int) -> [ChangeEntry]? {
        guard since >= startRevision, since <= endRevision else { return nil }
        let first = since - startRevision
        return splices[first...].enumerated().map { offset, splice in
            let revision = since + offset + 1
            guard let entry = HistoryEntry(words: splice.at, splice.inserted, splice.removed) else {
                return ChangeEntry(revision: revision, reload: reload!)
            }
            return ChangeEntry(revision: revision, entry)
        }
    }
}

/// One entry of a session's changes: the write that took it to `revision`, as a splice (nil: no
/// row changed), or a carry-over to a newer menu (``reload``), whose splices are computed on read.
package struct ChangeEntry: Sendable {
    package var revision: Int
    /// The write's splice; nil for a hidden group's write, a reload and rows reconfigured.
    package var change: RowChange?
    /// Set for a reload: what its splices are computed from (``ReloadMark/listingDiff(on:)``).
    package var reload: ReloadMark?
    /// Set for a write that changed rows' content, not their number (a selection).
    package var reconfigured: ReconfiguredRows?

    package init(revision: Int, change: RowChange?) {
        self.revision = revision
        self.change = change
    }

    /// The entry of a write that left `entry`.
    package init(revision: Int, _ entry: HistoryEntry) {
        self.revision = revision
        switch entry {
        case .splice(let change): self.change = change
        case .reconfigured(let rows): reconfigured = rows
        }
    }

    package init(revision: Int, reload: ReloadMark) {
        self.revision = revision
        self.reload = reload
    }
}

/// What ``SessionStore/changes(of:since:in:)`` answers: the session's revision and the entries
/// since the asked revision, or nil entries when the history no longer reaches back that far.
package struct SessionChanges: Sendable {
    package var revision: Int
    package var entries: [ChangeEntry]?
    /// Another instance sharing the store carried the session over from the menu this one
    /// serves to a menu this one does not serve yet (a reload, or a change of the nodes hidden
    /// while unavailable, it has not caught up with): the entries are nil until it does.
    package var onALaterMenu: Bool

    package init(revision: Int, entries: [ChangeEntry]?, onALaterMenu: Bool = false) {
        self.revision = revision
        self.entries = entries
        self.onALaterMenu = onALaterMenu
    }
}
