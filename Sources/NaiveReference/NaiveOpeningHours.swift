import Foundation
import MenuModel

/// Opening hours by their definition (docs/config.md, Opening hours), the slow way, to check
/// `MenuHours` against: the clock's reading comes from Foundation's `TimeZone` (not the TZif
/// reader the server uses), a time's instant is found by stepping minute by minute, and every
/// question is answered node by node.
///
/// - A range starting on date d runs from the first instant the clock shows its `from` on d to
///   the first instant it shows its `to` (on d + 1 when `to` is at or before `from`); "shows"
///   counts a time the clock jumps past, so a range inside a skipped hour is empty.
/// - The ranges that start on d are d's exception's, else the week's for d's weekday (all day
///   without weekly hours).
/// - A node is open when its own ranges (if it has hours) and those of every group above it
///   hold the instant.
///
/// Cost: a clock reading is a Foundation call; an instant of a time about 200 of them (cached).
package final class NaiveOpeningHours {
    package let menu: Menu
    let zone: TimeZone
    private var firstInstants: [Int64: Int64] = [:]
    private var openings: [Int64: [Menu.Node: Bool]] = [:]

    /// nil when `menu` has no hours or Foundation does not know its zone.
    package init?(menu: Menu, zoneName: String) {
        guard !menu.scheduledNodes.isEmpty, let zone = TimeZone(identifier: zoneName) else { return nil }
        self.menu = menu
        self.zone = zone
    }

    /// The clock's reading at Unix second `t`, as seconds since 1970-01-01 00:00 of that clock.
    func localSeconds(_ t: Int64) -> Int64 {
        t + Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t))))
    }

    /// The date the clock shows at `t`.
    package func localDate(_ t: Int64) -> LocalDate {
        let seconds = localSeconds(t)
        return LocalDate(daysSinceEpoch: Int((seconds - ((seconds % 86_400) + 86_400) % 86_400) / 86_400))
    }

    /// The first whole minute at which the clock shows `minute` of `date` or a later time.
    package func firstInstant(_ date: LocalDate, minute: Int) -> Int64 {
        let target = Int64(date.daysSinceEpoch) * 86_400 + Int64(minute) * 60
        if let known = firstInstants[target] { return known }
        // Three hours before the instant the day before's offset gives: before any pass of the
        // time (no zone moved its clock by more than two hours at once).
        let dayBefore = Date(timeIntervalSince1970: TimeInterval(target - 86_400))
        var t = target - Int64(zone.secondsFromGMT(for: dayBefore)) - 3 * 3600
        precondition(localSeconds(t) < target, "the scan starts after the clock shows the time")
        while localSeconds(t) < target { t += 60 }
        firstInstants[target] = t
        return t
    }

    /// The node's own ranges that start on `date`, as [start, end) instants (empty ones left out).
    func ownIntervals(_ hours: OpeningHours, on date: LocalDate) -> [(start: Int64, end: Int64)] {
        let ranges: [TimeRange]
        if let exception = hours.exceptions[date] {
            ranges = exception
        } else if let weekly = hours.weekly {
            let weekday = Weekdays(day: ((date.daysSinceEpoch % 7) + 7 + 3) % 7)  // 1970-01-01: Thursday
            ranges = weekly.filter { $0.days.contains(weekday) }.map(\.range)
        } else {
            ranges = [TimeRange(from: 0, to: 1440)]
        }
        return ranges.compactMap { range in
            let start = firstInstant(date, minute: range.from)
            let endDate = range.to <= range.from || range.to == 1440 ? date.adding(days: 1) : date
            let end = firstInstant(endDate, minute: range.to == 1440 ? 0 : range.to)
            return end > start ? (start, end) : nil
        }
    }

    /// Whether `node`'s own hours hold `t` (true without hours of its own).
    func ownOpen(_ node: Menu.Node, at t: Int64) -> Bool {
        guard let hours = menu.openingHours(of: node) else { return true }
        let today = localDate(t)
        return (-2 ... 0).contains { back in
            ownIntervals(hours, on: today.adding(days: back)).contains { $0.start <= t && t < $0.end }
        }
    }

    /// Whether `node` can be ordered at `t`: its hours and those of every group above it hold.
    package func isOpen(_ node: Menu.Node, at t: Int64) -> Bool {
        if let known = openings[t]?[node] { return known }
        let open = isOpenUncached(node, at: t)
        openings[t, default: [:]][node] = open
        return open
    }

    private func isOpenUncached(_ node: Menu.Node, at t: Int64) -> Bool {
        var current: Menu.Node? = node
        while let node = current {
            if !ownOpen(node, at: t) { return false }
            current = menu.parent(of: node)
        }
        return true
    }

    /// Every instant at which `nodes`' own ranges start or end, from the local date before `t`'s
    /// to `days` days after it.
    func boundaries(of nodes: [Menu.Node], from t: Int64, days: Int, starts: Bool = true, ends: Bool = true)
        -> [Int64]
    {
        let today = localDate(t)
        var found: Set<Int64> = []
        for node in nodes {
            guard let hours = menu.openingHours(of: node) else { continue }
            for day in -2 ... days {
                for interval in ownIntervals(hours, on: today.adding(days: day)) {
                    if starts { found.insert(interval.start) }
                    if ends { found.insert(interval.end) }
                }
            }
        }
        return found.sorted()
    }

    /// The first instant after `t`, within `days` days, at which `node` and every group above it
    /// are open together; nil when there is none.
    package func nextOpening(of node: Menu.Node, after t: Int64, days: Int) -> Int64? {
        var chain: [Menu.Node] = []
        var current: Menu.Node? = node
        while let node = current {
            chain.append(node)
            current = menu.parent(of: node)
        }
        return boundaries(of: chain, from: t, days: days, ends: false).first { $0 > t && isOpen(node, at: $0) }
    }

    /// The scheduled nodes (those with hours of their own) closed at `t`.
    package func closedScheduledNodes(at t: Int64) -> Set<Menu.Node> {
        Set(menu.scheduledNodes.filter { !isOpen($0, at: t) })
    }

    /// The first instant after `t` and before `horizon` at which the set of closed scheduled
    /// nodes differs from the one at `t`; nil when there is none.
    package func nextChange(after t: Int64, before horizon: Int64, days: Int) -> Int64? {
        let now = closedScheduledNodes(at: t)
        return boundaries(of: menu.scheduledNodes, from: t, days: days).first {
            $0 > t && $0 < horizon && closedScheduledNodes(at: $0) != now
        }
    }
}
