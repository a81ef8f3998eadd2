/// The POSIX TZ string of a TZif footer (RFC 8536 section 3.3, with version 3's rule times from
/// -167 to 167 hours), e.g. `CET-1CEST,M3.5.0,M10.5.0/3` or `<+1030>-10:30<+11>-11,M10.1.0,M4.1.0`.
///
/// Invariant: offsets are east of Greenwich (local = utc + offset), the negation of the string's.
/// The rules repeat every 400 Gregorian years (146,097 days, a whole number of weeks), so an
/// instant is answered from its place in that cycle: any `Int64` works and nothing overflows.
/// Cost: a handful of civil-date computations and a sort of eight instants per question.
struct PosixTimeZone: Sendable, Equatable {
    let standardOffset: Int
    let daylight: Daylight?

    struct Daylight: Sendable, Equatable {
        let offset: Int
        /// When daylight time starts, in standard time, and ends, in daylight time.
        let start: Rule
        let end: Rule
    }

    struct Rule: Sendable, Equatable {
        let date: RuleDate
        /// Seconds after local midnight of `date`: -167 to 167 hours.
        let time: Int
    }

    enum RuleDate: Sendable, Equatable {
        /// `Jn`: day 1 to 365, February 29 never counted.
        case julian(Int)
        /// `n`: day 0 to 365, February 29 counted.
        case zeroBased(Int)
        /// `Mm.w.d`: weekday `d` (0 Sunday) of week `w` (5: the last) of month `m`.
        case monthWeekDay(month: Int, week: Int, weekday: Int)
    }

    private static let cycle: Int64 = 146_097 * 86_400

    init(parsing text: [UInt8], name: String) throws(ZoneRulesError) {
        var scanner = Scanner(bytes: text)
        let malformed = ZoneRulesError.malformed(
            name: name, detail: "its footer TZ string \"\(String(decoding: text, as: UTF8.self))\" is not valid POSIX")
        guard scanner.designation(), let standard = scanner.time(maxHours: 24) else { throw malformed }
        standardOffset = -standard
        guard scanner.peek != nil else {
            daylight = nil
            return
        }
        guard scanner.designation() else { throw malformed }
        let offset = scanner.peek == UInt8(ascii: ",") ? standardOffset + 3600 : scanner.time(maxHours: 24).map { -$0 }
        guard let offset, scanner.skip(","), let start = scanner.rule(), scanner.skip(","), let end = scanner.rule(),
            scanner.peek == nil
        else { throw malformed }
        daylight = Daylight(offset: offset, start: start, end: end)
    }

    func offset(at t: Int64) -> Int {
        guard let daylight else { return standardOffset }
        let place = Self.place(t)
        let changes = self.changes(daylight, around: place)
        let inDaylight = changes.last(where: { $0.time <= place })?.toDaylight ?? !(changes.first?.toDaylight ?? true)
        return inDaylight ? daylight.offset : standardOffset
    }

    /// The first start or end of daylight time strictly after `t`, whether or not it changes the offset.
    func nextTransition(after t: Int64) -> Int64? {
        guard let daylight else { return nil }
        let place = Self.place(t)
        guard let next = changes(daylight, around: place).first(where: { $0.time > place }) else { return nil }
        let (result, overflow) = t.addingReportingOverflow(next.time - place)
        return overflow ? nil : result
    }

    /// `t`'s place in the 400-year cycle that starts at 1970-01-01.
    private static func place(_ t: Int64) -> Int64 {
        let remainder = t % cycle
        return remainder < 0 ? remainder + cycle : remainder
    }

    /// The starts and ends of daylight time from two years before `t`'s (within a year: 400 years
    /// are 146,097 days) to two after, in order; an end sorts before a start at the same instant,
    /// so permanent daylight time stays in daylight time.
    private func changes(_ daylight: Daylight, around t: Int64) -> [(time: Int64, toDaylight: Bool)] {
        let year = 1970 + Int(t / 86_400) * 400 / 146_097
        let changes = (year - 2 ... year + 2).flatMap { year in
            [
                (time: instant(daylight.start, year, standardOffset), toDaylight: true),
                (time: instant(daylight.end, year, daylight.offset), toDaylight: false)
            ]
        }
        return changes.sorted { ($0.time, $0.toDaylight ? 1 : 0) < ($1.time, $1.toDaylight ? 1 : 0) }
    }

    private func instant(_ rule: Rule, _ year: Int, _ offset: Int) -> Int64 {
        let day: Int
        switch rule.date {
        case .julian(let number):
            let leap = daysFromCivil(year, 3, 1) - daysFromCivil(year, 2, 1) == 29
            day = daysFromCivil(year, 1, 1) + number - 1 + (leap && number >= 60 ? 1 : 0)
        case .zeroBased(let number): day = daysFromCivil(year, 1, 1) + number
        case .monthWeekDay(let month, let week, let weekday):
            let first = daysFromCivil(year, month, 1)
            let length = daysFromCivil(year, month + 1, 1) - first  // month 13 is January of the next year
            var after = (weekday - (first + 4) % 7 + 7) % 7 + (week - 1) * 7  // 1970-01-01 was a Thursday
            while after >= length { after -= 7 }
            day = first + after
        }
        return Int64(day) * 86_400 + Int64(rule.time - offset)
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`);
/// month 13 is January of the next year. MenuModel's `LocalDate` counts its days with it.
public func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
    let year = month <= 2 ? year - 1 : year
    let era = (year >= 0 ? year : year - 399) / 400
    let yearOfEra = year - era * 400
    let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
    return era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
}

/// Reads a POSIX TZ string; each method consumes what it recognizes and returns nil otherwise.
private struct Scanner {
    let bytes: [UInt8]
    var index = 0

    static let digits = Set("0123456789".utf8)
    static let letters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    static let quotable = digits.union("+-".utf8)

    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard peek == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }

    /// A time zone designation: three or more letters, or `<`three or more of A-Z a-z 0-9 + -`>`.
    mutating func designation() -> Bool {
        let start = index
        let quoted = skip("<")
        while let byte = peek, Self.letters.contains(byte) || (quoted && Self.quotable.contains(byte)) { index += 1 }
        let length = index - start - (quoted ? 1 : 0)
        return length >= 3 && (!quoted || skip(">"))
    }

    /// `[+-]hh[:mm[:ss]]` in seconds, hours at most `maxHours`.
    mutating func time(maxHours: Int) -> Int? {
        let sign = skip("-") ? -1 : 1
        if sign == 1 { _ = skip("+") }
        guard var seconds = number(max: maxHours).map({ $0 * 3600 }) else { return nil }
        for unit in [60, 1] where skip(":") {
            guard let value = number(max: 59) else { return nil }
            seconds += value * unit
        }
        return sign * seconds
    }

    /// `date[/time]`, the time 02:00:00 when absent.
    mutating func rule() -> PosixTimeZone.Rule? {
        let date: PosixTimeZone.RuleDate
        if skip("J") {
            guard let day = number(max: 365), day >= 1 else { return nil }
            date = .julian(day)
        } else if skip("M") {
            guard let month = number(max: 12), month >= 1, skip("."), let week = number(max: 5), week >= 1, skip("."),
                let weekday = number(max: 6)
            else { return nil }
            date = .monthWeekDay(month: month, week: week, weekday: weekday)
        } else {
            guard let day = number(max: 365) else { return nil }
            date = .zeroBased(day)
        }
        guard skip("/") else { return PosixTimeZone.Rule(date: date, time: 7200) }
        return time(maxHours: 167).map { PosixTimeZone.Rule(date: date, time: $0) }
    }

    /// One or more decimal digits worth at most `max`.
    mutating func number(max: Int) -> Int? {
        var value: Int?
        while let byte = peek, Self.digits.contains(byte) {
            value = (value ?? 0) * 10 + Int(byte - 0x30)
            guard value ?? 0 <= max else { return nil }
            index += 1
        }
        return value
    }
}
