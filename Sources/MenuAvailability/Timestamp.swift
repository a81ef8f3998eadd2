import MenuModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An instant, in whole milliseconds since 1970-01-01T00:00:00Z, read from and written as RFC 3339
/// (`2026-12-06T19:30:00Z`, `2026-12-06T20:30:00.250+01:00`).
///
/// Parsing is strict and by hand (no formatter, no locale): `YYYY-MM-DDTHH:MM:SS[.fraction]` then
/// `Z` or `±HH:MM`; `T`/`Z` in either case or a space for `T` (RFC 3339 §5.6, its note); a day that
/// the month has (leap years by the Gregorian rule); second 60 (a leap second) is read as the
/// second after 59. Fractions beyond milliseconds are cut, not rounded. Years 0001-9999.
/// Cost: one pass over at most ``maxLength`` bytes, no allocation but the error's.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// The system's wall clock now (`CLOCK_REALTIME`, to the millisecond).
    public static var now: Timestamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Timestamp(milliseconds: Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000)
    }

    /// This instant `milliseconds` later.
    public func adding(milliseconds delta: Int64) -> Timestamp { Timestamp(milliseconds: milliseconds + delta) }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.milliseconds < b.milliseconds }

    /// Longer input is refused before it is read: 35 bytes hold any RFC 3339 time with nine fraction digits.
    public static let maxLength = 40

    /// Why a text is not an RFC 3339 time, worded for a client.
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String {
            "\(reason); send an RFC 3339 time such as 2026-12-06T19:30:00Z or 2026-12-06T20:30:00+01:00"
        }
    }

    public init(rfc3339 text: String) throws(Malformed) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maxLength else { throw Malformed(reason: "longer than \(Self.maxLength) bytes") }
        var reader = DigitReader(bytes: bytes)
        let year = try reader.number(4, "the year")
        try reader.expect(UInt8(ascii: "-"), "a - after the year")
        let month = try reader.number(2, "the month")
        try reader.expect(UInt8(ascii: "-"), "a - after the month")
        let day = try reader.number(2, "the day")
        guard (1 ... 9999).contains(year) else { throw Malformed(reason: "year \(year) is not from 0001 to 9999") }
        guard (1 ... 12).contains(month) else { throw Malformed(reason: "month \(month) is not from 01 to 12") }
        guard let date = LocalDate(year: year, month: month, day: day) else {
            throw Malformed(reason: "\(year)-\(Self.two(month)) has no day \(day)")
        }
        guard let separator = reader.next(),
            [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(separator)
        else { throw Malformed(reason: "no T between the date and the time") }
        let hour = try reader.number(2, "the hour")
        try reader.expect(UInt8(ascii: ":"), "a : after the hour")
        let minute = try reader.number(2, "the minutes")
        try reader.expect(UInt8(ascii: ":"), "a : after the minutes (seconds are required)")
        let second = try reader.number(2, "the seconds")
        guard hour <= 23, minute <= 59, second <= 60 else {
            throw Malformed(reason: "\(Self.two(hour)):\(Self.two(minute)):\(Self.two(second)) is not a time of day")
        }
        var millisecond = 0
        if reader.peek() == UInt8(ascii: ".") {
            _ = reader.next()
            var digits = 0
            while let byte = reader.peek(), (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte) {
                _ = reader.next()
                if digits < 3 { millisecond = millisecond * 10 + Int(byte - UInt8(ascii: "0")) }
                digits += 1
            }
            guard (1 ... 9).contains(digits) else {
                throw Malformed(reason: "a fraction of a second needs 1 to 9 digits")
            }
            if digits < 3 { for _ in digits ..< 3 { millisecond *= 10 } }
        }
        var offsetMinutes = 0
        switch reader.next() {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"): break
        case let sign? where sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"):
            let hours = try reader.number(2, "the offset's hours")
            try reader.expect(UInt8(ascii: ":"), "a : in the offset")
            let minutes = try reader.number(2, "the offset's minutes")
            guard hours <= 23, minutes <= 59 else { throw Malformed(reason: "the offset is not from -23:59 to +23:59") }
            offsetMinutes = (hours * 60 + minutes) * (sign == UInt8(ascii: "-") ? -1 : 1)
        default: throw Malformed(reason: "no time zone: end it with Z or an offset such as +01:00")
        }
        guard reader.isAtEnd else { throw Malformed(reason: "text after the time zone") }
        let seconds =
            Int64(date.daysSinceEpoch) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetMinutes * 60)
        milliseconds = seconds * 1000 + Int64(millisecond)
        // An offset can move a time at either end of the years out of them: it could not be written back.
        guard Self.range.contains(milliseconds) else { throw Malformed(reason: "not from year 0001 to 9999 in UTC") }
    }

    /// 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z: what ``rfc3339`` can write.
    public static let range: ClosedRange<Int64> = -62_135_596_800_000 ... 253_402_300_799_999

    /// RFC 3339 in UTC with `Z`, milliseconds only when not zero: `2026-12-06T19:30:00Z` (an
    /// instant outside ``range`` is written clamped to it).
    public var rfc3339: String {
        let milliseconds = min(max(milliseconds, Self.range.lowerBound), Self.range.upperBound)
        let seconds = milliseconds.floorDivided(by: 1000)
        let millisecond = Int(milliseconds - seconds * 1000)
        let days = Int(seconds.floorDivided(by: 86_400))
        let time = Int(seconds - Int64(days) * 86_400)
        let (year, month, day) = LocalDate(daysSinceEpoch: days).civil
        var text = "\(Self.four(year))-\(Self.two(month))-\(Self.two(day))T"
        text += "\(Self.two(time / 3600)):\(Self.two(time / 60 % 60)):\(Self.two(time % 60))"
        if millisecond != 0 {
            text += "." + String(String(millisecond + 1000).dropFirst())
        }
        return text + "Z"
    }

    public var description: String { rfc3339 }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    private static func four(_ value: Int) -> String { String(String(value + 10_000).suffix(4)) }
}

/// Reads fixed-width decimal fields and single bytes of an RFC 3339 text.
private struct DigitReader {
    let bytes: [UInt8]
    var index = 0

    var isAtEnd: Bool { index == bytes.count }
    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func next() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func number(_ digits: Int, _ name: String) throws(Timestamp.Malformed) -> Int {
        var value = 0
        for _ in 0 ..< digits {
            guard let byte = next(), (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte) else {
                throw Timestamp.Malformed(reason: "\(name) must be \(digits) digits")
            }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(Timestamp.Malformed) {
        guard next() == byte else { throw Timestamp.Malformed(reason: "expected \(what)") }
    }
}

extension Int64 {
    /// Division rounding toward negative infinity (instants before 1970 included).
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
