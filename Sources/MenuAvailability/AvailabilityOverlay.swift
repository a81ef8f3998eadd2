import MenuModel

/// The availability of the menu's nodes that are not plainly available, by node id, with a
/// revision that every change moves: the volatile state a restaurant sets during service, kept
/// outside the immutable menu so that a change invalidates no menu version and no session state.
///
/// Beside the admin API's entries it holds the scheduled nodes the menu's opening hours close,
/// as of the instant it was last advanced to (``advanced(to:hours:)``): kept and shared like the
/// entries, so that every instance serves one sequence of revisions and a restart or a reload
/// starts from what clients were shown.
///
/// Invariant: no entry is ``AvailabilityState/available`` and none is `closed`; every
/// ``closedByHours`` value is `closed`; ``revision`` grows by one with every batch, expiry, hours
/// boundary or reload that changed what it holds, and only then. Keyed by id, so it survives a
/// reload wherever the id does (``keeping(nodesOf:)``). Memory: one dictionary entry per
/// unavailable node (id, state, optional time and reason: about 100 bytes with a short reason).
public struct AvailabilityOverlay: Sendable, Equatable {
    public private(set) var revision: Int
    /// What the admin API set.
    public private(set) var entries: [String: Availability]
    /// What the opening hours close, each `closed` until it opens.
    public private(set) var closedByHours: [String: Availability]

    public init(
        revision: Int = 0, entries: [String: Availability] = [:], closedByHours: [String: Availability] = [:]
    ) {
        self.revision = revision
        self.entries = entries.filter { $0.value.state != .available && $0.value.state != .closed }
        self.closedByHours = closedByHours.mapValues { Availability(state: .closed, until: $0.until) }
    }

    /// What each node with an entry or closed by hours shows of its own: closed by hours wins over
    /// an entry (the kitchen is shut either way, and the opening time is what a guest needs).
    public var shownEntries: [String: Availability] {
        closedByHours.isEmpty ? entries : entries.merging(closedByHours) { _, closed in closed }
    }

    /// One change of a batch: `id` becomes `availability` (``AvailabilityState/available`` clears it).
    public struct Change: Sendable, Equatable {
        public var id: String
        public var availability: Availability

        public init(id: String, _ availability: Availability) {
            self.id = id
            self.availability = availability
        }
    }

    /// Why a batch was refused as a whole (nothing of it applied).
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// Ids the menu does not have (the first few, and how many in all).
        case unknownIDs([String], count: Int)
        /// One id twice in one batch: which change counts would be a guess.
        case duplicateID(String)
        /// An end time that is not after now: most likely a clock or time zone mistake.
        case untilNotInFuture(id: String, until: Timestamp, now: Timestamp)
        /// An end time for `available`, which has nothing to end.
        case untilForAvailable(id: String)

        public var description: String {
            switch self {
            case .unknownIDs(let ids, let count):
                "the menu has no node "
                    + ids.map { "\"\($0)\"" }.joined(separator: ", ")
                    + (count > ids.count ? " (and \(count - ids.count) more)" : "") + "; nothing was changed"
            case .duplicateID(let id): "the batch names \"\(id)\" more than once; name each node once"
            case .untilNotInFuture(let id, let until, let now):
                "\"\(id)\": until \(until.rfc3339) is not after now (\(now.rfc3339)); nothing was changed"
            case .untilForAvailable(let id):
                "\"\(id)\": until is for sold_out or paused; available has nothing to end"
            }
        }
    }

    /// This overlay with `changes` applied, all or none, checked against `menu` at `now`; and the
    /// ids whose availability changed (a change to what a node already has is none). O(changes).
    public func applying(_ changes: [Change], on menu: Menu, now: Timestamp) throws(Refusal) -> (
        overlay: AvailabilityOverlay, changed: [String]
    ) {
        var unknown: [String] = []
        var unknownCount = 0
        var seen = Set<String>()
        for change in changes {
            guard seen.insert(change.id).inserted else { throw .duplicateID(change.id) }
            if menu.node(withID: change.id) == nil {
                unknownCount += 1
                if unknown.count < 10 { unknown.append(change.id) }
            }
        }
        if unknownCount > 0 { throw .unknownIDs(unknown, count: unknownCount) }
        for change in changes {
            guard let until = change.availability.until else { continue }
            if change.availability.state == .available { throw .untilForAvailable(id: change.id) }
            if until <= now { throw .untilNotInFuture(id: change.id, until: until, now: now) }
        }
        var next = self
        var changed: [String] = []
        for change in changes {
            let new: Availability? = change.availability.state == .available ? nil : change.availability
            guard next.entries[change.id] != new else { continue }
            next.entries[change.id] = new
            changed.append(change.id)
        }
        if !changed.isEmpty { next.revision += 1 }
        return (next, changed)
    }

    /// This overlay at `now`: without the entries whose `until` is `now` or earlier, and with the
    /// nodes `hours` close then (none without hours); one revision more when anything changed, and
    /// the ids whose shown availability changed. O(entries) plus ``MenuHours/state(at:)``.
    public func advanced(to now: Timestamp, hours: MenuHours?) -> (overlay: AvailabilityOverlay, changed: [String]) {
        var next = self
        next.entries = entries.filter { $0.value.until.map { $0 > now } ?? true }
        next.closedByHours = hours?.state(at: now).closed.mapValues { Availability(state: .closed, until: $0) } ?? [:]
        guard next.entries != entries || next.closedByHours != closedByHours else { return (self, []) }
        next.revision += 1
        return (next, AvailabilityRows.changedIDs(from: self, to: next))
    }

    /// The earliest `until` of any entry: when ``advanced(to:hours:)`` next has an entry to end.
    public var nextExpiry: Timestamp? { entries.values.compactMap(\.until).min() }

    /// This overlay without the ids `menu` does not have (a reload removed them), and those ids.
    /// (The hours' closings of ids it lacks are dropped too, without being reported: the next
    /// ``advanced(to:hours:)`` on the new menu sets them.)
    public func keeping(nodesOf menu: Menu) -> (overlay: AvailabilityOverlay, dropped: [String]) {
        let dropped = entries.keys.filter { menu.node(withID: $0) == nil }.sorted()
        let unscheduled = closedByHours.keys.filter { menu.node(withID: $0) == nil }
        guard !dropped.isEmpty || !unscheduled.isEmpty else { return (self, []) }
        var next = self
        for id in dropped { next.entries[id] = nil }
        for id in unscheduled { next.closedByHours[id] = nil }
        next.revision += 1
        return (next, dropped)
    }
}
