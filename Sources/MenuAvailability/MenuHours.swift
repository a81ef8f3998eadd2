import MenuModel
import TimeZoneRules

/// A menu's opening hours evaluated at instants: which nodes are closed then, until when, and
/// the next instant at which anything opens or closes.
///
/// The rules (docs/config.md, Opening hours):
/// - A node is open when its own hours (if it has any) and those of every group above it are
///   open: a child's hours narrow its group's.
/// - A range belongs to the day it starts on; an exception replaces the ranges that start on its
///   date (a range through midnight from the day before still runs into it).
/// - A time means the first instant the restaurant's clock shows it. In a skipped hour (spring
///   forward) that is the instant the clock jumps past it; in a repeated hour (fall back) it is
///   the first pass. A range that falls entirely in a skipped hour is empty that day.
///
/// Invariant: built from one menu, never changed (its cache of answers aside). Cost:
/// ``state(at:)`` is O(8) when a cached answer holds at the instant; otherwise O(h · r · d) for
/// h distinct hours with r ranges a day over the d days looked at (9, or 367 for a node closed
/// that long), plus O(depth + intervals) per scheduled node. 1,000 groups with one schedule on the
/// 1.1M menu: docs/performance.md, Opening hours.
public struct MenuHours: Sendable {
    public let menu: Menu
    public let zone: ZoneRules

    /// Answers already computed, shared by the copies of this value.
    private let cache = SpanCache<State>()

    /// nil when no node of `menu` has hours.
    public init?(menu: Menu) {
        guard !menu.scheduledNodes.isEmpty, let zone = menu.timeZone else { return nil }
        self.menu = menu
        self.zone = zone
    }

    /// What the hours say at one instant.
    public struct State: Sendable, Equatable {
        /// The ids of the scheduled nodes closed then (a node below one of them shows its
        /// group's entry), each with the instant it next opens (nil: not within a year).
        public var closed: [String: Timestamp?]
        /// The first instant after the one asked about at which a scheduled node opens or closes
        /// (nil: none within the days looked at... never for a menu with any range).
        public var nextChange: Timestamp?
    }

    /// Days looked at past the instant's date for the next change; a node closed beyond them is
    /// looked at up to ``longHorizonDays`` for its next opening.
    static let horizonDays = 8
    static let longHorizonDays = 366

    /// What the hours say at `instant`: from the cache when an earlier answer still holds (a
    /// state holds from the instant it was computed for until its next change), else computed
    /// and kept.
    public func state(at instant: Timestamp) -> State {
        if let known = cache.value(at: instant.milliseconds) { return known }
        let state = computeState(at: instant)
        // No change within the days looked at: the answer is kept for an hour only.
        let validUntil = state.nextChange?.milliseconds ?? instant.milliseconds + 3_600_000
        cache.keep(state, from: instant.milliseconds, until: validUntil)
        return state
    }

    func computeState(at instant: Timestamp) -> State {
        let t = instant.milliseconds.floorDivided(by: 1000)
        // Nodes with the same hours (a breakfast's dishes) share their intervals.
        var near: [OpeningHours: [Interval]] = [:]
        var far: [OpeningHours: [Interval]] = [:]
        func intervals(of node: Menu.Node, days: Int) -> [Interval] {
            guard let hours = menu.openingHours(of: node) else { return [] }
            if days == Self.horizonDays, let known = near[hours] { return known }
            if days != Self.horizonDays, let known = far[hours] { return known }
            let found = self.intervals(of: hours, from: t, days: days)
            if days == Self.horizonDays { near[hours] = found } else { far[hours] = found }
            return found
        }
        // Where the days looked at end: an interval reaching it ends there only for this look.
        let horizon = self.instant(localDate(of: t).adding(days: Self.horizonDays + 1), minute: 0)
        var effective: [Menu.Node: [Interval]] = [:]
        var closed: [String: Timestamp?] = [:]
        var nextChange: Int64?
        for node in menu.scheduledNodes {
            let group = scheduledGroup(of: node)
            var open = intervals(of: node, days: Self.horizonDays)
            if let group { open = Self.intersect(open, effective[group] ?? []) }
            effective[node] = open
            let containing = open.first { $0.start <= t && t < $0.end }
            if let containing {
                if containing.end < horizon { nextChange = min(nextChange ?? containing.end, containing.end) }
                continue
            }
            var opening = open.first { $0.start > t }?.start
            if let opening {
                nextChange = min(nextChange ?? opening, opening)
            } else {
                var farOpen = intervals(of: node, days: Self.longHorizonDays)
                var above = group
                while let scheduled = above {
                    farOpen = Self.intersect(farOpen, intervals(of: scheduled, days: Self.longHorizonDays))
                    above = scheduledGroup(of: scheduled)
                }
                opening = farOpen.first { $0.start > t }?.start
            }
            // updateValue: a subscript assignment of nil would drop a node that never opens.
            closed.updateValue(opening.map { Timestamp(milliseconds: $0 * 1000) }, forKey: menu.id(of: node))
        }
        return State(closed: closed, nextChange: nextChange.map { Timestamp(milliseconds: $0 * 1000) })
    }

    /// The nearest group above `node` with hours of its own.
    private func scheduledGroup(of node: Menu.Node) -> Menu.Node? {
        var ancestor = menu.parent(of: node)
        while let group = ancestor {
            if menu.openingHours(of: group) != nil { return group }
            ancestor = menu.parent(of: group)
        }
        return nil
    }

    /// A half-open span of Unix seconds.
    struct Interval: Equatable {
        var start: Int64
        var end: Int64
    }

    /// The node's own open intervals that start from the day before `t`'s local date to `days`
    /// days after it, sorted and merged (22:00-24:00 and 00:00-02:00 make one).
    func intervals(of node: Menu.Node, from t: Int64, days: Int) -> [Interval] {
        guard let hours = menu.openingHours(of: node) else { return [] }
        return intervals(of: hours, from: t, days: days)
    }

    /// `hours`' open intervals, as ``intervals(of:from:days:)``.
    func intervals(of hours: OpeningHours, from t: Int64, days: Int) -> [Interval] {
        let today = localDate(of: t)
        var spans: [Interval] = []
        for offset in -1 ... days {
            let date = today.adding(days: offset)
            for range in hours.ranges(startingOn: date) {
                let start = instant(date, minute: range.from)
                let end = instant(range.crossesMidnight ? date.adding(days: 1) : date, minute: range.to)
                if start < end { spans.append(Interval(start: start, end: end)) }
            }
        }
        spans.sort { $0.start < $1.start }
        var merged: [Interval] = []
        for span in spans {
            if let last = merged.last, span.start <= last.end {
                merged[merged.count - 1].end = max(last.end, span.end)
            } else {
                merged.append(span)
            }
        }
        return merged
    }

    /// The spans in both sorted, merged lists. O(a + b).
    static func intersect(_ a: [Interval], _ b: [Interval]) -> [Interval] {
        var result: [Interval] = []
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            let start = max(a[i].start, b[j].start)
            let end = min(a[i].end, b[j].end)
            if start < end { result.append(Interval(start: start, end: end)) }
            if a[i].end < b[j].end { i += 1 } else { j += 1 }
        }
        return result
    }

    /// The date the restaurant's clock shows at `t`.
    public func localDate(of t: Int64) -> LocalDate {
        LocalDate(daysSinceEpoch: Int((t + Int64(zone.offset(at: t))).floorDivided(by: 86_400)))
    }

    /// The first instant at which the clock shows `minute` (0...1440) of `date`, or, when the
    /// clock skips that time, the instant it jumps past it.
    public func instant(_ date: LocalDate, minute: Int) -> Int64 {
        let wall = Int64(date.daysSinceEpoch) * 86_400 + Int64(minute) * 60
        let before = Int64(zone.offset(at: wall - 86_400))
        let after = Int64(zone.offset(at: wall + 86_400))
        let candidates = [wall - before, wall - after].filter { Int64(zone.offset(at: $0)) == wall - $0 }
        if let first = candidates.min() { return first }
        // In a gap: the transition lies after the clock's last instant before it (wall - after)
        // and at or before the first after it (wall - before).
        return zone.nextTransition(after: wall - after) ?? wall - before
    }
}
