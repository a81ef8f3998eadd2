import MenuModel

/// The availability of the menu's nodes that are not plainly available, by node id, with a
/// revision that every change moves: the volatile state a restaurant sets during service, kept
/// outside the immutable menu so that a change invalidates no menu version and no session state.
///
/// Invariant: no entry is ``AvailabilityState/available``; ``revision`` grows by one with every
/// batch, expiry or reload that changed an entry, and only then. Keyed by id, so it survives a
/// reload wherever the id does (``keeping(nodesOf:)``). Memory: one dictionary entry per
/// unavailable node (id, state, optional time and reason: about 100 bytes with a short reason).
public struct AvailabilityOverlay: Sendable, Equatable {
    public private(set) var revision: Int
    public private(set) var entries: [String: Availability]

    public init(revision: Int = 0, entries: [String: Availability] = [:]) {
        self.revision = revision
        self.entries = entries.filter { $0.value.state != .available }
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

    /// The earliest `until` of any entry: when ``expiring(at:)`` next has something to do.
    public var nextExpiry: Timestamp? { entries.values.compactMap(\.until).min() }

    /// This overlay without the entries whose `until` is `now` or earlier, and their ids. O(entries).
    public func expiring(at now: Timestamp) -> (overlay: AvailabilityOverlay, expired: [String]) {
        let expired = entries.filter { $0.value.until.map { $0 <= now } ?? false }.map(\.key).sorted()
        guard !expired.isEmpty else { return (self, []) }
        var next = self
        for id in expired { next.entries[id] = nil }
        next.revision += 1
        return (next, expired)
    }

    /// This overlay without the ids `menu` does not have (a reload removed them), and those ids.
    public func keeping(nodesOf menu: Menu) -> (overlay: AvailabilityOverlay, dropped: [String]) {
        let dropped = entries.keys.filter { menu.node(withID: $0) == nil }.sorted()
        guard !dropped.isEmpty else { return (self, []) }
        var next = self
        for id in dropped { next.entries[id] = nil }
        next.revision += 1
        return (next, dropped)
    }
}
