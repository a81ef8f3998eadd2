import Foundation
import Testing
import TimeZoneRules

/// ZoneRules, read from the machine's /usr/share/zoneinfo, against Foundation's `TimeZone`, which
/// answers from ICU's bundled copy of the same IANA database. Both are 2025b on the machine these
/// tests were written on; a zone whose rules changed between the two versions would show up here.
struct ZoneRulesDifferentialTests {
    static let zones = [
        "Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "America/Sao_Paulo",
        "Pacific/Auckland", "Europe/Dublin", "UTC"
    ]
    /// 2000 to 2036 (the file's transition table) and 2038 to 2060 (its footer rules).
    static let ranges: [Range<Int64>] = [946_684_800 ..< 2_114_380_800, 2_145_916_800 ..< 2_871_763_200]
    /// About six hours, never the same time of day twice in a row.
    static let step: Int64 = 6 * 3600 + 61

    @Test(arguments: zones)
    func offsetsEveryFewHoursAndAroundEachTransitionMatchFoundation(zone: String) throws {
        let rules = try ZoneRules.load(named: zone)
        let foundation = try #require(TimeZone(identifier: zone))
        var mismatches: [String] = []
        func check(_ t: Int64) {
            let expected = foundation.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t)))
            if rules.offset(at: t) != expected {
                mismatches.append("offset at \(t): \(rules.offset(at: t)), not \(expected)")
            }
            let next = Self.nextTransition(foundation, after: t)
            if let next, rules.nextTransition(after: t) != next {
                mismatches.append("next after \(t): \(rules.nextTransition(after: t) ?? -1), not \(next)")
            }
        }
        for range in Self.ranges {
            for t in stride(from: range.lowerBound, to: range.upperBound, by: Int(Self.step)) { check(t) }
            for transition in Self.transitions(foundation, in: range) {
                for t in transition - 1 ... transition + 1 { check(t) }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(5))")
    }

    /// The same transitions one after another: none missed and none extra, where Foundation has any.
    @Test(arguments: zones)
    func theChainOfTransitionsIsFoundations(zone: String) throws {
        let rules = try ZoneRules.load(named: zone)
        let foundation = try #require(TimeZone(identifier: zone))
        for range in Self.ranges {
            let expected = Self.transitions(foundation, in: range)
            var ours: [Int64] = []
            var cursor = range.lowerBound
            while let next = rules.nextTransition(after: cursor), next < range.upperBound {
                ours.append(next)
                cursor = next
            }
            #expect(ours == expected, "\(zone) from \(range.lowerBound)")
        }
    }

    @Test func zonesWithoutDaylightTimeNeverChangeAgain() throws {
        for zone in ["Asia/Kolkata", "UTC", "America/Sao_Paulo"] {
            #expect(try ZoneRules.load(named: zone).nextTransition(after: 1_600_000_000) == nil, "\(zone)")
        }
    }

    private static func nextTransition(_ zone: TimeZone, after t: Int64) -> Int64? {
        zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: TimeInterval(t))).flatMap {
            Int64(exactly: $0.timeIntervalSince1970)
        }
    }

    private static func transitions(_ zone: TimeZone, in range: Range<Int64>) -> [Int64] {
        var transitions: [Int64] = []
        var cursor = range.lowerBound
        while let next = nextTransition(zone, after: cursor), next < range.upperBound {
            transitions.append(next)
            cursor = next
        }
        return transitions
    }
}
