import Foundation
import MenuAvailability
import MenuModel
import NaiveReference
import Testing

/// MenuHours against the naive reference (``NaiveOpeningHours``: Foundation's clock, minute by
/// minute, node by node) on random menus with random weekly hours, empty hours and exceptions,
/// in zones with odd daylight saving time, at instants around each zone's transitions: the closed
/// scheduled nodes, when each opens, and the next change must be the reference's.
@Suite struct OpeningHoursDifferentialTests {
    /// A zone and a year whose transitions the instants crowd around.
    struct Zone: Sendable, CustomTestStringConvertible {
        var name: String
        var year: Int
        var testDescription: String { "\(name) \(year)" }
    }

    static let zones = [
        Zone(name: "Europe/Paris", year: 2026),
        Zone(name: "America/New_York", year: 2026),
        // DST of 30 minutes.
        Zone(name: "Australia/Lord_Howe", year: 2026),
        // The clock skipped midnight (00:00 became 01:00) on 2018-11-04.
        Zone(name: "America/Sao_Paulo", year: 2018),
        // No DST, a half-hour offset.
        Zone(name: "Asia/Kolkata", year: 2026)
    ]

    @Test(arguments: zones)
    func closedNodesTheirOpeningsAndTheNextChangeAreTheReferences(zone: Zone) throws {
        var rng = SplitMix64(state: 0x0C10_5ED ^ UInt64(zone.name.utf8.count * 7919 + zone.year))
        var checked = (instants: 0, closed: 0, changes: 0)
        for transition in RandomSchedules.transitions(of: zone.name, in: zone.year) {
            for _ in 0 ..< 3 {
                let around = LocalDate(daysSinceEpoch: Int(transition / 86_400))
                let json = RandomSchedules.config(zone: zone.name, around: around, using: &rng)
                let menu = try Menu(jsonData: Data(json.utf8))
                guard let hours = MenuHours(menu: menu),
                    let naive = NaiveOpeningHours(menu: menu, zoneName: zone.name)
                else { continue }
                var instants = [transition - 1, transition, transition + 1]
                for _ in 0 ..< 12 {
                    instants.append(transition + Int64.random(in: -2 * 86_400 ... 3 * 86_400, using: &rng))
                }
                for t in instants {
                    let state = hours.state(at: Timestamp(milliseconds: t * 1000))
                    let closed = naive.closedScheduledNodes(at: t)
                    let context = "\(zone.name) at \(Timestamp(milliseconds: t * 1000).rfc3339) in \(json)"
                    #expect(Set(state.closed.keys) == Set(closed.map(menu.id(of:))), "closed: \(context)")
                    for node in closed {
                        let opening = naive.nextOpening(of: node, after: t, days: 40)
                        let given = state.closed[menu.id(of: node)] ?? nil
                        #expect(
                            given?.milliseconds == opening.map { $0 * 1000 },
                            "\(menu.id(of: node)) opens at \(given?.rfc3339 ?? "never"), the reference says \(opening.map { Timestamp(milliseconds: $0 * 1000).rfc3339 } ?? "never"): \(context)"
                        )
                    }
                    let horizon = naive.firstInstant(naive.localDate(t).adding(days: 9), minute: 0)
                    let change = naive.nextChange(after: t, before: horizon, days: 10)
                    #expect(
                        state.nextChange?.milliseconds == change.map { $0 * 1000 },
                        "next change \(state.nextChange?.rfc3339 ?? "none"), the reference's \(change.map { Timestamp(milliseconds: $0 * 1000).rfc3339 } ?? "none"): \(context)"
                    )
                    checked.instants += 1
                    checked.closed += closed.count
                    checked.changes += change == nil ? 0 : 1
                }
            }
        }
        // The random menus must have made the comparison mean something.
        #expect(checked.instants >= 30 && checked.closed >= 30 && checked.changes >= 20, "\(checked)")
    }
}
