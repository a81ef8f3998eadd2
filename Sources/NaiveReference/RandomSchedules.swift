import Foundation
import MenuModel

/// Random menus with opening hours for differential tests: groups up to three deep, weekly
/// ranges through midnight and around the hours DST moves, empty hours, exceptions (closed or
/// other hours) on dates near a given one.
package enum RandomSchedules {
    /// Times the ranges are made of: midnight, the hours DST moves, a late evening, 24:00.
    static let minutes = [0, 30, 60, 90, 120, 150, 180, 420, 630, 1080, 1320, 1410, 1440]

    static func time(_ minute: Int) -> String {
        let hours = minute / 60
        let rest = minute % 60
        return (hours < 10 ? "0" : "") + "\(hours):" + (rest < 10 ? "0" : "") + "\(rest)"
    }

    static func range(using rng: inout SplitMix64, days: Bool) -> String {
        let from = minutes.dropLast().randomElement(using: &rng)!
        var to = minutes.dropFirst().randomElement(using: &rng)!
        if to == from { to = 1440 }
        var text = #"{"from": "\#(time(from))", "to": "\#(time(to))""#
        if days, Bool.random(using: &rng) {
            let picked = Weekdays.names.filter { _ in Int.random(in: 0 ..< 3, using: &rng) > 0 }
            text += #", "days": [\#((picked.isEmpty ? ["sat"] : picked).map { "\"\($0)\"" }.joined(separator: ", "))]"#
        }
        return text + "}"
    }

    /// A node's `hours` and `exceptions` keys (or none), exceptions on dates near `around`.
    static func schedule(using rng: inout SplitMix64, around: LocalDate) -> String {
        var keys: [String] = []
        switch Int.random(in: 0 ..< 10, using: &rng) {
        case 0 ..< 4:
            let count = Int.random(in: 1 ... 3, using: &rng)
            let ranges = (0 ..< count).map { _ in range(using: &rng, days: true) }
            keys.append(#""hours": [\#(ranges.joined(separator: ", "))]"#)
        case 4: keys.append(#""hours": []"#)
        default: break
        }
        if Int.random(in: 0 ..< 4, using: &rng) == 0 {
            var dates = Set<Int>()
            for _ in 0 ..< Int.random(in: 1 ... 3, using: &rng) { dates.insert(Int.random(in: -3 ... 6, using: &rng)) }
            let exceptions = dates.sorted().map { offset -> String in
                let date = around.adding(days: offset).description
                return Bool.random(using: &rng)
                    ? #"{"date": "\#(date)", "closed": true}"#
                    : #"{"date": "\#(date)", "hours": [\#(range(using: &rng, days: false))]}"#
            }
            keys.append(#""exceptions": [\#(exceptions.joined(separator: ", "))]"#)
        }
        return keys.map { ", " + $0 }.joined()
    }

    /// Groups up to three deep, about 20 nodes, about half of them with a schedule.
    package static func config(zone: String, around: LocalDate, using rng: inout SplitMix64) -> String {
        var next = 0
        func node(depth: Int) -> String {
            next += 1
            let id = "n\(next)"
            let keys = Self.schedule(using: &rng, around: around)
            guard depth < 3, Int.random(in: 0 ..< 3, using: &rng) > 0 else {
                return #"{"id": "\#(id)", "title": "\#(id)"\#(keys)}"#
            }
            let children = (0 ..< Int.random(in: 1 ... 3, using: &rng)).map { _ in node(depth: depth + 1) }
            return #"{"id": "\#(id)", "title": "\#(id)", "items": [\#(children.joined(separator: ", "))]\#(keys)}"#
        }
        let top = (0 ..< 4).map { _ in node(depth: 0) }
        return #"{"timeZone": "\#(zone)", "items": [\#(top.joined(separator: ", "))]}"#
    }

    /// `zone`'s transitions in `year`, by Foundation, as Unix seconds (one mid-year instant for a
    /// zone without any).
    package static func transitions(of zone: String, in year: Int) -> [Int64] {
        let foundation = TimeZone(identifier: zone)!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var date = calendar.date(from: DateComponents(year: year, month: 1, day: 1))!
        var found: [Int64] = []
        while let next = foundation.nextDaylightSavingTimeTransition(after: date),
            calendar.component(.year, from: next) == year
        {
            found.append(Int64(next.timeIntervalSince1970))
            date = next
        }
        return found.isEmpty ? [Int64(date.timeIntervalSince1970) + 180 * 86_400] : found
    }
}
