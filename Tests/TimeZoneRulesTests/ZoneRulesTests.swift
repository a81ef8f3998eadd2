import Foundation
import Testing
import TimeZoneRules

/// The footer's POSIX TZ rules, read from TZif files built here, against instants worked out by
/// hand (2050: March 27 and October 30 are the last Sundays, March 13 the second, November 6 the
/// first, April 3 the first Sunday of April, September 25 the last of September, October 2 the first).
struct ZoneRulesFooterTests {
    /// A footer and the changes it makes after January 1 of 2050 (2051 for the Julian days).
    struct Case: Sendable, CustomTestStringConvertible {
        let footer: String
        let january: Int
        let changes: [(time: Int64, offset: Int)]
        var testDescription: String { footer }
    }

    static let cases: [Case] = [
        // Europe/Paris: last Sunday of March 01:00Z, last Sunday of October 01:00Z.
        Case(
            footer: "CET-1CEST,M3.5.0,M10.5.0/3", january: 3600, changes: [(2_531_955_600, 7200), (2_550_704_400, 3600)]
        ),
        // America/New_York: 02:00 EST is 07:00Z on March 13; 02:00 EDT is 06:00Z on November 6.
        Case(
            footer: "EST5EDT,M3.2.0,M11.1.0", january: -18000,
            changes: [(2_530_767_600, -14400), (2_551_327_200, -18000)]),
        // Pacific/Auckland: daylight time ends 03:00 NZDT April 3 (14:00Z April 2), starts 02:00 NZST
        // September 25 (14:00Z September 24).
        Case(
            footer: "NZST-12NZDT,M9.5.0,M4.1.0/3", january: 46800,
            changes: [(2_532_520_800, 43200), (2_547_640_800, 46800)]),
        // Australia/Lord_Howe: half an hour of daylight time; 02:00 +11 on April 3 is 15:00Z April 2,
        // 02:00 +1030 on October 2 is 15:30Z October 1.
        Case(
            footer: "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", january: 39600,
            changes: [(2_532_524_400, 37800), (2_548_251_000, 39600)]),
        // America/Nuuk: negative rule times; -01:00 of Sunday in -02 and 00:00 in -01 are both 01:00Z.
        Case(
            footer: "<-02>2<-01>,M3.5.0/-1,M10.5.0/0", january: -7200,
            changes: [(2_531_955_600, -3600), (2_550_704_400, -7200)]),
        // Europe/Dublin: negative daylight saving (GMT in winter is the "daylight" time).
        Case(footer: "IST-1GMT0,M10.5.0,M3.5.0/1", january: 0, changes: [(2_531_955_600, 3600), (2_550_704_400, 0)]),
        // Rule times of 167 and -167 hours: April 2 23:00 (standard, +00) and October 23 01:00 (+01).
        Case(
            footer: "AAA0BBB-1,M3.5.0/167,M10.5.0/-167", january: 0,
            changes: [(2_532_553_200, 3600), (2_550_096_000, 0)]),
        // Julian days never count February 29: J60 is March 1 and J300 October 27 in 2051 and 2052.
        Case(
            footer: "AAA0BBB-1,J60/0,J300/0", january: 0,
            changes: [(2_561_241_600, 3600), (2_581_974_000, 0), (2_592_864_000, 3600), (2_613_596_400, 0)]),
        // Zero-based days count February 29: day 59 is March 1 of 2051 but February 29 of 2052, day 300
        // October 28 of 2051 but October 27 of 2052.
        Case(
            footer: "AAA0BBB-1,59/0,300/0", january: 0,
            changes: [(2_561_241_600, 3600), (2_582_060_400, 0), (2_592_777_600, 3600), (2_613_596_400, 0)])
    ]

    @Test(arguments: cases)
    func transitionsFromTheFooterAreTheOnesWorkedOutByHand(_ example: Case) throws {
        let rules = try ZoneRules(tzif: tzif(footer: example.footer), name: "Test/Footer")
        let start: Int64 = example.changes[0].time < 2_556_144_000 ? 2_524_608_000 : 2_556_144_000  // 2050 or 2051
        #expect(rules.offset(at: start) == example.january)
        var cursor = start
        for (time, offset) in example.changes {
            #expect(rules.nextTransition(after: cursor) == time, "after \(cursor)")
            #expect(rules.offset(at: time - 1) != offset && rules.offset(at: time) == offset, "at \(time)")
            cursor = time
        }
    }

    @Test(arguments: [
        ("IST-5:30", 19800), ("<-03>3", -10800), ("<+13>-13", 46800), ("UTC0", 0), ("<+0545>-5:45", 20700)
    ])
    func aFooterWithoutDaylightTimeIsOneOffsetForever(footer: String, offset: Int) throws {
        let rules = try ZoneRules(tzif: tzif(footer: footer), name: "Test/Footer")
        for t: Int64 in [.min, -1_000_000_000_000, 0, 2_524_608_000, .max] {
            #expect(rules.offset(at: t) == offset)
            #expect(rules.nextTransition(after: t) == nil)
        }
    }

    /// RFC 8536's permanent daylight time: daylight time ends at 25:00 on December 31, the instant it
    /// starts again on January 1, so the offset never changes.
    @Test func permanentDaylightTimeNeverChanges() throws {
        let rules = try ZoneRules(tzif: tzif(footer: "EST5EDT4,0/0,J365/25"), name: "Test/Footer")
        for t in stride(from: Int64(2_524_608_000 - 86400), to: 2_556_144_000 + 86400, by: 3600) {
            #expect(rules.offset(at: t) == -14400)
        }
        #expect(rules.nextTransition(after: 2_524_608_000) == nil)
    }

    @Test func extremeInstantsNeitherTrapNorWrap() throws {
        let rules = try ZoneRules(tzif: tzif(footer: "CET-1CEST,M3.5.0,M10.5.0/3"), name: "Test/Footer")
        #expect(rules.nextTransition(after: .max) == nil)
        #expect(rules.nextTransition(after: .max - 86400 * 366) != nil)
        #expect(rules.nextTransition(after: .min).map { $0 > .min && $0 < .min + 86400 * 366 } == true)
        // 400 years on, the same instants: the Gregorian calendar repeats every 146,097 days.
        let cycle: Int64 = 12_622_780_800
        #expect(rules.nextTransition(after: 2_524_608_000 + cycle) == 2_531_955_600 + cycle)
        #expect(rules.nextTransition(after: 2_524_608_000 - 2 * cycle) == 2_531_955_600 - 2 * cycle)
        // 1889-10-06 23:00Z is daylight time, 1889-10-27 01:00Z (its last Sunday) standard time again.
        #expect(rules.offset(at: -2_531_955_600) == 7200 && rules.offset(at: -2_530_220_400) == 3600)
    }

    @Test(arguments: [
        "CET-1CEST", "CET", "CET-1CEST,M3.5.0", "CET-1CEST,M13.5.0,M10.5.0", "CET-1CEST,M3.6.0,M10.5.0",
        "CET-1CEST,M3.5.7,M10.5.0", "CET-1CEST,J0,J365", "CET-1CEST,366,1", "CET-25", "CET-1:60",
        "CET-1CEST,M3.5.0/168,M10.5.0",
        "CE-1", "<CE>-1", "<CET-1", "CET-1CEST,M3.5.0,M10.5.0,", "CET-1CEST,M3.5.0,M10.5.0/3x", "1CET",
        "CET-99999999999999999999"
    ])
    func anInvalidFooterIsMalformed(footer: String) {
        #expect(throws: ZoneRulesError.self) { try ZoneRules(tzif: tzif(footer: footer), name: "Test/Footer") }
        do {
            _ = try ZoneRules(tzif: tzif(footer: footer), name: "Test/Footer")
        } catch {
            if case .malformed(let name, let detail) = error {
                #expect(name == "Test/Footer" && detail.contains(footer))
            } else {
                Issue.record("\(error)")
            }
        }
    }

    /// Europe/London kept British Standard Time (+01) all year from 1968 to 1971: the file's
    /// transition from BST as daylight time to BST as standard time in October 1968 is no change.
    @Test func aTransitionThatKeepsTheOffsetIsSkipped() throws {
        let london = try ZoneRules.load(named: "Europe/London")
        #expect(london.nextTransition(after: -59_004_001) == -59_004_000)  // 1968-02-18 02:00Z
        #expect(london.nextTransition(after: -59_004_000) == 57_722_400)  // 1971-10-31 02:00Z
        let built = try ZoneRules(
            tzif: tzif(footer: "", offsets: [3600, 7200, 7200], transitions: [(100, 1), (200, 2), (300, 0)]),
            name: "Test/Skip")
        #expect(built.nextTransition(after: 100) == 300)
        #expect([99, 100, 200, 299, 300].map(built.offset(at:)) == [3600, 7200, 7200, 7200, 3600])
        #expect(built.nextTransition(after: 300) == nil, "an empty footer keeps the last offset")
    }

    /// Before the first transition: time type 0 (RFC 8536 section 3.2), even when it is daylight time.
    @Test func beforeTheFirstTransitionTheOffsetIsTypeZeros() throws {
        let rules = try ZoneRules(
            tzif: tzif(footer: "", offsets: [-3600, 0], transitions: [(0, 1)]), name: "Test/First")
        #expect(rules.offset(at: -1) == -3600 && rules.offset(at: .min) == -3600 && rules.offset(at: 0) == 0)
        #expect(rules.nextTransition(after: .min) == 0)
    }

    @Test func aVersionOneFileKeepsItsLastOffset() throws {
        let bytes = tzif(version: 0, footer: "", offsets: [3600, 7200], transitions: [(100, 1)])
        let rules = try ZoneRules(tzif: bytes, name: "Test/V1")
        #expect(rules.offset(at: 99) == 3600 && rules.offset(at: 100) == 7200 && rules.offset(at: .max) == 7200)
        #expect(rules.nextTransition(after: 100) == nil)
    }
}

/// A TZif file: version 2 (or 1 when `version` is 0) with one designation "ABC" for every type.
func tzif(version: UInt8 = 0x32, footer: String, offsets: [Int32] = [0], transitions: [(Int64, UInt8)] = []) -> [UInt8]
{
    func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    func block(timeSize: Int) -> [UInt8] {
        let counts: [UInt32] = [0, 0, 0, UInt32(transitions.count), UInt32(offsets.count), 4]
        var bytes = Array("TZif".utf8) + [version] + [UInt8](repeating: 0, count: 15) + counts.flatMap(bigEndian)
        bytes += transitions.flatMap { timeSize == 4 ? bigEndian(Int32(truncatingIfNeeded: $0.0)) : bigEndian($0.0) }
        bytes += transitions.map(\.1)
        bytes += offsets.flatMap { bigEndian($0) + [0, 0] } + Array("ABC\0".utf8)
        return bytes
    }
    return version == 0 ? block(timeSize: 4) : block(timeSize: 4) + block(timeSize: 8) + Array("\n\(footer)\n".utf8)
}
