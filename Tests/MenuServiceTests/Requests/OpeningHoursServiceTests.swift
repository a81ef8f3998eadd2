import Foundation
import HTTPCore
import MenuAvailability
import MenuModel
import MenuService
import MenuServiceTestSupport
import MenuSessions
import Synchronization
import Testing

/// Opening hours as a client reads them (issue 27 §3): closed rows, `nextChangeAt`, `?at=`, and a
/// boundary that reaches the changes feed. The service's clock is fixed, so nothing depends on
/// when the test runs.
@Suite struct OpeningHoursServiceTests {
    /// Breakfast weekdays 07:00-10:30 in Paris, with two dishes; tea without hours.
    static let config = #"""
        {"timeZone": "Europe/Paris", "items": [
          {"id": "breakfast", "title": "Breakfast", "expanded": true,
           "hours": [{"days": ["mon","tue","wed","thu","fri"], "from": "07:00", "to": "10:30"}],
           "items": [{"id": "congee", "title": "Congee"}, {"id": "youtiao", "title": "Youtiao"}]},
          {"id": "tea", "title": "Tea"}]}
        """#
    /// Monday 2026-12-07, 08:30 in Paris: breakfast is open.
    static let morning = try! Timestamp(rfc3339: "2026-12-07T07:30:00Z")
    static let noon = try! Timestamp(rfc3339: "2026-12-07T11:00:00Z")

    let menu = try! Menu(jsonData: Data(config.utf8))
    let clock = FixedClock(OpeningHoursServiceTests.morning)

    /// The service's clock: an instant the test sets.
    final class FixedClock: Sendable {
        let instant: Mutex<Timestamp>
        init(_ instant: Timestamp) { self.instant = Mutex(instant) }
        func set(_ value: Timestamp) { instant.withLock { $0 = value } }
        var now: Timestamp { instant.withLock { $0 } }
    }

    func service() -> MenuAPI {
        let clock = clock
        return MenuAPI(store: InMemorySessionStore(menu: menu), maxLimit: 500, clock: { clock.now })
    }

    static func shown(_ response: HTTPResponse) -> [String: String] {
        var states: [String: String] = [:]
        for row in response.json["rows"] as? [[String: Any]] ?? [] {
            if let availability = row["availability"] as? [String: Any] {
                states[row["id"] as! String] = availability["state"] as? String
            }
        }
        return states
    }

    @Test func inItsHoursNothingIsClosedAndTheAnswerSaysWhenThatChanges() {
        let service = service()
        let rows = service.call("GET", "/rows")
        #expect(Self.shown(rows).isEmpty)
        #expect(rows.json["nextChangeAt"] as? String == "2026-12-07T09:30:00Z", "10:30 in Paris")
        #expect(service.call("GET", "/count").json["nextChangeAt"] as? String == "2026-12-07T09:30:00Z")
    }

    @Test func atABoundaryTheGroupClosesAndTheFeedTellsWhichRows() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        let before = service.call("GET", "/rows", session: session)
        let revision = before.json["availabilityRevision"] as? Int ?? 0
        let tag = try #require(before.header("ETag"))

        clock.set(Self.noon)
        let changed = service.expireAvailability()
        #expect(changed == ["breakfast"])

        let after = service.call("GET", "/rows", session: session)
        #expect(Self.shown(after) == ["breakfast": "closed", "congee": "closed", "youtiao": "closed"])
        let rows = try #require(after.json["rows"] as? [[String: Any]])
        let breakfast = try #require(rows.first?["availability"] as? [String: Any])
        #expect(breakfast["until"] as? String == "2026-12-08T06:00:00Z", "Tuesday 07:00 in Paris")
        #expect((rows[1]["availability"] as? [String: Any])?["from"] as? String == "breakfast")
        #expect(after.json["nextChangeAt"] as? String == "2026-12-08T06:00:00Z")
        #expect(after.json["availabilityRevision"] as? Int == revision + 1)
        #expect(after.header("ETag") != tag, "a page cached before the closing is not confirmed")

        let feed = service.call(
            "GET", "/changes", query: [("since", "0"), ("availabilitySince", String(revision))], session: session)
        let availability = try #require(feed.json["availability"] as? [String: Any])
        #expect(availability["reconfigured"] as? [Int] == [0, 1, 2], "the group and its two dishes")
    }

    @Test func atAnInstantShowsWhatWillBeOrderableThen() throws {
        let service = service()
        let later = service.call("GET", "/rows", query: [("at", "2026-12-07T12:00:00+01:00")])
        #expect(later.status == 200, "\(later.json)")
        #expect(Self.shown(later)["breakfast"] == "closed")
        #expect(later.json["nextChangeAt"] as? String == "2026-12-08T06:00:00Z", "the next change after at")
        #expect(later.json["availabilityRevision"] == nil, "today's revision: nothing changed yet")
        #expect(later.header("ETag")?.contains("t1796641200000-") == true)
        // Until the next change the rows are the same: a later instant gets the same menu and tag.
        let afternoon = service.call("GET", "/rows", query: [("at", "2026-12-07T15:00:00+01:00")])
        #expect(afternoon.header("ETag") == later.header("ETag") && afternoon.body == later.body)
        let tomorrow = service.call("GET", "/rows", query: [("at", "2026-12-08T08:00:00+01:00")])
        #expect(tomorrow.header("ETag") != later.header("ETag") && Self.shown(tomorrow).isEmpty)
        // An unencoded + arrives as a space: read as +.
        let spaced = service.call("GET", "/count", query: [("at", "2026-12-07T12:00:00 01:00")])
        #expect(spaced.status == 200 && spaced.json["nextChangeAt"] as? String == "2026-12-08T06:00:00Z")
        let bothSpaces = service.call("GET", "/count", query: [("at", "2026-12-07 12:00:00 01:00")])
        #expect(bothSpaces.json["nextChangeAt"] as? String == "2026-12-08T06:00:00Z", "a space for T stays one")
        #expect(Self.shown(service.call("GET", "/rows")).isEmpty, "now is unchanged")
        let search = service.call("GET", "/search", query: [("q", "congee"), ("at", "2026-12-07T12:00:00Z")])
        #expect(search.status == 200)
    }

    @Test(arguments: ["tomorrow", "2026-12-07", "2026-12-07T25:00:00Z", "", String(repeating: "9", count: 41)])
    func aMalformedAtIsRefusedSayingWhatItMustBe(value: String) {
        let response = service().call("GET", "/rows", query: [("at", value)])
        #expect(response.status == 400 && response.errorCode == "invalid_parameter")
        #expect((response.json["error"] as? [String: Any])?["message"] as? String ?? "" != "")
    }

    @Test func atGivenTwiceIsRefused() {
        let response = service().call(
            "GET", "/count", query: [("at", "2026-12-07T12:00:00Z"), ("at", "2026-12-07T13:00:00Z")])
        #expect(response.status == 400 && response.errorCode == "invalid_parameter")
    }
}
