import MenuAvailability
import MenuModel
import Testing

/// Opening hours across daylight saving time, in two zones, both transitions, with ranges through
/// midnight. The rule (docs/config.md): a time is the first instant the clock shows it; in a
/// skipped hour, the instant the clock jumps past it. The expected instants are worked out by
/// hand from the zones' published rules (Paris: 01:00Z last Sunday of March and October; New
/// York: 02:00 local second Sunday of March and first Sunday of November).
@Suite struct OpeningHoursDSTTests {
    /// When `range` opens and closes on `date` (or, for the start, the open interval that
    /// contains `probe`).
    func openInterval(_ from: String, _ to: String, zone: String, probe: String) throws -> (Timestamp?, Timestamp?) {
        let (_, hours) = try scheduledMenu(
            #"{"id": "n", "title": "N", "hours": [{"from": "\#(from)", "to": "\#(to)"}]}"#, zone: zone)
        let state = hours.state(at: instant(probe))
        return (state.closed["n"] ?? nil, state.nextChange)
    }

    @Test func parisSpringForwardOpensWhenTheClockJumps() throws {
        // 2026-03-29: 02:00 CET becomes 03:00 CEST at 01:00Z. 02:30-04:00 opens at the jump.
        let (opens, _) = try openInterval("02:30", "04:00", zone: "Europe/Paris", probe: "2026-03-29T00:30:00Z")
        #expect(opens == instant("2026-03-29T01:00:00Z"))
        let (_, closes) = try openInterval("02:30", "04:00", zone: "Europe/Paris", probe: "2026-03-29T01:00:00Z")
        #expect(closes == instant("2026-03-29T02:00:00Z"), "04:00 CEST")
    }

    @Test func aRangeInsideTheSkippedHourIsEmptyThatDay() throws {
        let (opens, _) = try openInterval("02:15", "02:45", zone: "Europe/Paris", probe: "2026-03-29T00:30:00Z")
        #expect(opens == instant("2026-03-30T00:15:00Z"), "closed that night, open the next at 02:15 CEST")
    }

    @Test func parisFallBackUsesTheFirstPassOfTheRepeatedHour() throws {
        // 2026-10-25: 03:00 CEST becomes 02:00 CET at 01:00Z; 02:00-02:59 happens twice.
        let (opens, _) = try openInterval("02:30", "02:45", zone: "Europe/Paris", probe: "2026-10-24T22:00:00Z")
        #expect(opens == instant("2026-10-25T00:30:00Z"), "02:30 CEST, the first pass")
        let (_, closes) = try openInterval("02:30", "02:45", zone: "Europe/Paris", probe: "2026-10-25T00:35:00Z")
        #expect(closes == instant("2026-10-25T00:45:00Z"))
        // 01:00-03:00 lasts three hours: 01:00 CEST to 03:00 CET.
        let (_, longEnd) = try openInterval("01:00", "03:00", zone: "Europe/Paris", probe: "2026-10-25T01:30:00Z")
        #expect(longEnd == instant("2026-10-25T02:00:00Z"))
    }

    @Test func parisRangeThroughMidnightOnBothTransitionNights() throws {
        // 22:00-03:00 from Saturday 2026-03-28: 21:00Z to 03:00 CEST = 01:00Z (the jump).
        let (_, spring) = try openInterval("22:00", "03:00", zone: "Europe/Paris", probe: "2026-03-28T23:00:00Z")
        #expect(spring == instant("2026-03-29T01:00:00Z"))
        // From Saturday 2026-10-24: 20:00Z to 03:00 CET = 02:00Z, one hour longer than usual.
        let (_, autumn) = try openInterval("22:00", "03:00", zone: "Europe/Paris", probe: "2026-10-24T23:00:00Z")
        #expect(autumn == instant("2026-10-25T02:00:00Z"))
    }

    @Test func newYorkSpringForwardAndFallBack() throws {
        // 2026-03-08: 02:00 EST becomes 03:00 EDT at 07:00Z. 22:00-02:30 from Saturday ends at the jump.
        let (_, spring) = try openInterval(
            "22:00", "02:30", zone: "America/New_York", probe: "2026-03-08T04:00:00Z")
        #expect(spring == instant("2026-03-08T07:00:00Z"))
        // 2026-11-01: 02:00 EDT becomes 01:00 EST at 06:00Z. 22:00-01:30 ends at the first 01:30 (EDT).
        let (_, autumn) = try openInterval(
            "22:00", "01:30", zone: "America/New_York", probe: "2026-11-01T04:00:00Z")
        #expect(autumn == instant("2026-11-01T05:30:00Z"))
        // Closed at the second 01:30 (EST, 06:30Z): next opening 22:00 EST on Sunday = 03:00Z Monday.
        let (opens, _) = try openInterval("22:00", "01:30", zone: "America/New_York", probe: "2026-11-01T06:30:00Z")
        #expect(opens == instant("2026-11-02T03:00:00Z"))
    }

    @Test func aWholeDayOnTheShortAndLongDaysLastsWhatTheClockSays() throws {
        // "00:00"-"24:00" every day is never closed, whatever the day's length.
        let (_, hours) = try scheduledMenu(
            #"{"id": "n", "title": "N", "hours": [{"from": "00:00", "to": "24:00"}]}"#, zone: "America/New_York")
        for probe in ["2026-03-08T06:59:59Z", "2026-03-08T07:00:00Z", "2026-11-01T05:59:59Z", "2026-11-01T06:00:00Z"] {
            #expect(hours.state(at: instant(probe)).closed.isEmpty, "\(probe)")
        }
    }
}
