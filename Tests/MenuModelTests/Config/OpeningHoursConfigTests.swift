import Foundation
import Testing
import TimeZoneRules

@testable import MenuModel

/// `timeZone`, `hours` and `exceptions` in a config: read into each node's ``OpeningHours``, and
/// every mistake refused at its JSON path with the node's id and the value.
@Suite struct OpeningHoursConfigTests {
    /// A menu of one node `n` whose extra keys are `fields`, in `zone` (none when nil).
    func config(_ fields: String, zone: String? = "Europe/Paris") -> String {
        let top = zone.map { #""timeZone": "\#($0)", "# } ?? ""
        return #"{\#(top)"items": [{"id": "n", "title": "N", \#(fields)}]}"#
    }

    @Test func hoursAndExceptionsAreReadIntoTheNode() throws {
        let menu = try Menu(
            jsonData: Data(
                config(
                    #""hours": [{"days": ["mon", "tue"], "from": "07:00", "to": "10:30"}, {"from": "22:00", "to": "02:00"}], "exceptions": [{"date": "2026-12-25", "closed": true}, {"date": "2026-12-31", "hours": [{"from": "07:00", "to": "12:00"}]}]"#
                ).utf8))
        #expect(menu.timeZone?.name == "Europe/Paris")
        #expect(menu.scheduledNodes == [1])
        let hours = try #require(menu.openingHours(of: 1))
        #expect(
            hours.weekly == [
                WeeklyRange(days: [Weekdays(day: 0), Weekdays(day: 1)], range: TimeRange(from: 420, to: 630)),
                WeeklyRange(days: .all, range: TimeRange(from: 1320, to: 120))
            ])
        #expect(hours.exceptions[LocalDate("2026-12-25")!] == [])
        #expect(hours.exceptions[LocalDate("2026-12-31")!] == [TimeRange(from: 420, to: 720)])
        // 2026-12-07 is a Monday: both ranges start on it; the 8th is a Tuesday, the 9th neither.
        #expect(hours.ranges(startingOn: LocalDate("2026-12-07")!).count == 2)
        #expect(hours.ranges(startingOn: LocalDate("2026-12-09")!) == [TimeRange(from: 1320, to: 120)])
        #expect(hours.ranges(startingOn: LocalDate("2026-12-25")!).isEmpty)
    }

    @Test func aWholeDayIsMidnightToTwentyFour() throws {
        let menu = try Menu(jsonData: Data(config(#""hours": [{"from": "00:00", "to": "24:00"}]"#).utf8))
        #expect(menu.openingHours(of: 1)?.weekly?.first?.range == .allDay)
    }

    @Test func aMenuWithoutHoursHasNoScheduleAndNeedsNoZone() throws {
        let menu = try Menu(jsonData: Data(config(#""attributes": {}"#, zone: nil).utf8))
        #expect(menu.timeZone == nil && menu.scheduledNodes.isEmpty)
    }

    @Test(arguments: [
        (
            #""hours": [{"from": "7:00", "to": "10:30"}]"#,
            ConfigProblem(path: "items[0].hours[0].from", kind: .invalidTimeOfDay, value: "\"7:00\"", nodeID: "n")
        ),
        (
            #""hours": [{"from": "24:00", "to": "10:30"}]"#,
            ConfigProblem(path: "items[0].hours[0].from", kind: .invalidTimeOfDay, value: "\"24:00\"", nodeID: "n")
        ),
        (
            #""hours": [{"from": "07:00", "to": "10:60"}]"#,
            ConfigProblem(path: "items[0].hours[0].to", kind: .invalidTimeOfDay, value: "\"10:60\"", nodeID: "n")
        ),
        (
            #""hours": [{"from": "07:00"}]"#,
            ConfigProblem(path: "items[0].hours[0]", kind: .missingKey, value: "\"to\"", nodeID: "n")
        ),
        (
            #""hours": [{"from": "07:00", "to": "07:00"}]"#,
            ConfigProblem(path: "items[0].hours[0]", kind: .emptyTimeRange, value: "\"07:00\"", nodeID: "n")
        ),
        (
            #""hours": [{"days": ["mon", "Funday"], "from": "07:00", "to": "08:00"}]"#,
            ConfigProblem(path: "items[0].hours[0].days[1]", kind: .invalidDay, value: "\"Funday\"", nodeID: "n")
        ),
        (
            #""hours": [{"days": [], "from": "07:00", "to": "08:00"}]"#,
            ConfigProblem(
                path: "items[0].hours[0].days", kind: .wrongType(expected: "a non-empty array of days"), value: "[]",
                nodeID: "n")
        ),
        (
            #""hours": [{"from": "07:00", "to": "08:00", "until": "x"}]"#,
            ConfigProblem(
                path: "items[0].hours[0].until", kind: .unknownScheduleKey(allowed: "days, from, to"),
                value: "\"until\"", nodeID: "n")
        ),
        (
            #""hours": {"from": "07:00"}"#,
            ConfigProblem(
                path: "items[0].hours", kind: .wrongType(expected: "an array of ranges"), value: #"{"from":"07:00"}"#,
                nodeID: "n")
        ),
        (
            #""exceptions": [{"date": "2026-02-30", "closed": true}]"#,
            ConfigProblem(
                path: "items[0].exceptions[0].date", kind: .invalidDate, value: "\"2026-02-30\"", nodeID: "n")
        ),
        (
            #""exceptions": [{"date": "2026-12-25", "closed": true}, {"date": "2026-12-25", "closed": true}]"#,
            ConfigProblem(
                path: "items[0].exceptions[1].date",
                kind: .repeatedExceptionDate(firstPath: "items[0].exceptions[0].date"), value: "\"2026-12-25\"",
                nodeID: "n")
        ),
        (
            #""exceptions": [{"date": "2026-12-31", "hours": [{"from": "07:00", "to": "12:00"}, {"from": "11:00", "to": "13:00"}]}]"#,
            ConfigProblem(
                path: "items[0].exceptions[0].hours[1]",
                kind: .overlappingRanges(firstPath: "items[0].exceptions[0].hours[0]"),
                value: #"{"from":"11:00","to":"13:00"}"#, nodeID: "n")
        ),
        (
            #""exceptions": [{"date": "2026-12-31"}]"#,
            ConfigProblem(
                path: "items[0].exceptions[0]", kind: .exceptionWithoutHours, value: #"{"date":"2026-12-31"}"#,
                nodeID: "n")
        ),
        (
            #""exceptions": [{"date": "2026-12-31", "closed": true, "hours": []}]"#,
            ConfigProblem(
                path: "items[0].exceptions[0]", kind: .exceptionWithoutHours,
                value: #"{"closed":true,"date":"2026-12-31","hours":[]}"#, nodeID: "n")
        )
    ])
    func aMistakeInTheHoursIsNamedWhereItIs(fields: String, expected: ConfigProblem) {
        #expect(configProblems(config(fields)) == [expected])
    }

    @Test func hoursNeedATimeZone() {
        let found = configProblems(config(#""hours": [{"from": "07:00", "to": "10:00"}]"#, zone: nil))
        #expect(
            found == [
                ConfigProblem(path: "items[0].hours", kind: .hoursWithoutTimeZone, value: "\"hours\"", nodeID: "n")
            ])
        #expect(found.first?.description.contains("Europe/Paris") == true)
    }

    @Test(arguments: ["Mars/Olympus_Mons", "../../etc/passwd", "", "Europe/"])
    func aZoneTheDatabaseLacksIsRefusedAtTimeZone(name: String) throws {
        let found = configProblems(config(#""hours": [{"from": "07:00", "to": "10:00"}]"#, zone: name))
        let problem = try #require(found.first)
        #expect(found.count == 1 && problem.path == "timeZone" && problem.nodeID == nil)
        guard case .unknownTimeZone = problem.kind else {
            Issue.record("expected unknownTimeZone, found \(problem.kind)")
            return
        }
        #expect(problem.description.hasPrefix("timeZone: time zone \"\(name)\" cannot be used: "))
    }
}
