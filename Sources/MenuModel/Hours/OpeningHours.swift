import TimeZoneRules

/// When a node can be ordered, as its config's `hours` and `exceptions` say, in the menu's time
/// zone (``Menu/timeZone``). A node without either is not limited by hours of its own; a node's
/// hours narrow its group's (docs/config.md, Opening hours).
///
/// Invariant: every range is non-empty; each exception date appears once and its ranges do not
/// overlap. Memory: a few words per range. Evaluation lives in `MenuAvailability.MenuHours`.
public struct OpeningHours: Sendable, Hashable {
    /// The weekly ranges; nil when the config gives no `hours` (open all day, every day, but for
    /// the exceptions). An empty list is never open but on exception dates with hours.
    public var weekly: [WeeklyRange]?
    /// The ranges of the dates whose hours differ from the week's, by date; an empty list is a
    /// closed day.
    public var exceptions: [LocalDate: [TimeRange]]

    public init(weekly: [WeeklyRange]?, exceptions: [LocalDate: [TimeRange]] = [:]) {
        self.weekly = weekly
        self.exceptions = exceptions
    }

    /// The ranges that start on `date`: its exception's when it has one, else the week's for its
    /// weekday (all day when there are no weekly hours).
    public func ranges(startingOn date: LocalDate) -> [TimeRange] {
        if let exception = exceptions[date] { return exception }
        guard let weekly else { return [TimeRange.allDay] }
        let day = date.weekday
        return weekly.filter { $0.days.contains(day) }.map(\.range)
    }
}

/// A range of the day's clock, in minutes after midnight: `from` in 0..<1440, `to` in 1...1440
/// (24:00 is the end of the day). `to <= from` runs through midnight into the next day
/// (22:00-02:00); `from == to` is refused by the config check.
public struct TimeRange: Sendable, Hashable {
    public var from: Int
    public var to: Int

    public init(from: Int, to: Int) {
        self.from = from
        self.to = to
    }

    public static let allDay = TimeRange(from: 0, to: 1440)

    /// Whether the range ends on the next day.
    public var crossesMidnight: Bool { to <= from }

    /// `HH:MM` minutes, or nil when `text` is not a time of day (24:00 only when `end`).
    public static func minutes(of text: String, end: Bool) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":") else { return nil }
        let digits = [bytes[0], bytes[1], bytes[3], bytes[4]]
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let values = digits.map { Int($0 - UInt8(ascii: "0")) }
        let hour = values[0] * 10 + values[1]
        let minute = values[2] * 10 + values[3]
        guard minute < 60 else { return nil }
        if hour == 24 && minute == 0 { return end ? 1440 : nil }
        return hour < 24 ? hour * 60 + minute : nil
    }
}

/// The days of the week a weekly range is for.
public struct Weekdays: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Monday first, as the config names them.
    public static let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// The day `index` days after Monday (0 = Monday ... 6 = Sunday).
    public init(day index: Int) { rawValue = 1 << UInt8(index) }

    public static let all = Weekdays(rawValue: 0x7F)
}

/// One weekly range: the days it starts on and its clock range.
public struct WeeklyRange: Sendable, Hashable {
    public var days: Weekdays
    public var range: TimeRange

    public init(days: Weekdays, range: TimeRange) {
        self.days = days
        self.range = range
    }
}

/// A date of the proleptic Gregorian calendar, as the restaurant's clock shows it: no time zone.
///
/// Invariant: `daysSinceEpoch` is the count of days from 1970-01-01; year, month and day follow
/// from it (Howard Hinnant's civil-date algorithms, O(1): `daysFromCivil` of TimeZoneRules one
/// way, ``civil`` the other).
public struct LocalDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let daysSinceEpoch: Int

    public init(daysSinceEpoch: Int) { self.daysSinceEpoch = daysSinceEpoch }

    /// nil when the three do not name a date (month 13, February 30).
    public init?(year: Int, month: Int, day: Int) {
        guard (1 ... 12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year) else { return nil }
        daysSinceEpoch = daysFromCivil(year, month, day)
    }

    /// `YYYY-MM-DD`, or nil.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0 ..< 4), let month = number(5 ..< 7), let day = number(8 ..< 10) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    public var civil: (year: Int, month: Int, day: Int) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The day of the week (1970-01-01 was a Thursday).
    public var weekday: Weekdays {
        let index = ((daysSinceEpoch % 7) + 7 + 3) % 7
        return Weekdays(day: index)
    }

    public func adding(days: Int) -> LocalDate { LocalDate(daysSinceEpoch: daysSinceEpoch + days) }

    public static func < (a: LocalDate, b: LocalDate) -> Bool { a.daysSinceEpoch < b.daysSinceEpoch }

    public var description: String {
        let (year, month, day) = civil
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let y = String(year)
        return String(repeating: "0", count: max(0, 4 - y.count)) + y + "-" + two(month) + "-" + two(day)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
