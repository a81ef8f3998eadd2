import Testing

@testable import MenuModel

/// Dates of the restaurant's calendar: parsed strictly, counted from 1970-01-01, weekdays right.
@Suite struct LocalDateTests {
    @Test func datesRoundTripThroughTheirDayCount() {
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            let date = LocalDate(daysSinceEpoch: days)
            let (year, month, day) = date.civil
            #expect(LocalDate(year: year, month: month, day: day) == date)
            if year >= 0 && year <= 9999 { #expect(LocalDate(date.description) == date) }
        }
    }

    @Test func knownDatesHaveTheirWeekday() {
        #expect(LocalDate("1970-01-01")?.daysSinceEpoch == 0)
        #expect(LocalDate("1970-01-01")?.weekday == Weekdays(day: 3), "a Thursday")
        #expect(LocalDate("2026-12-07")?.weekday == Weekdays(day: 0), "a Monday")
        #expect(LocalDate("2026-12-06")?.weekday == Weekdays(day: 6), "a Sunday")
        #expect(LocalDate("1969-12-31")?.weekday == Weekdays(day: 2), "a Wednesday before the epoch")
        #expect(LocalDate("2000-02-29") != nil && LocalDate("1900-02-29") == nil && LocalDate("2026-13-01") == nil)
        #expect(LocalDate("2026-1-01") == nil && LocalDate("2026-01-0a") == nil && LocalDate("") == nil)
    }

    @Test func timesOfDayAreStrict() {
        #expect(TimeRange.minutes(of: "00:00", end: false) == 0)
        #expect(TimeRange.minutes(of: "23:59", end: false) == 1439)
        #expect(TimeRange.minutes(of: "24:00", end: true) == 1440)
        #expect(TimeRange.minutes(of: "24:00", end: false) == nil)
        for bad in ["24:01", "7:00", "07:0", "07-00", "ab:cd", "07:60", "-1:00", "07:00 "] {
            #expect(TimeRange.minutes(of: bad, end: true) == nil, "\(bad)")
        }
    }
}
