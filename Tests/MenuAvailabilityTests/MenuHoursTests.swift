import Foundation
import MenuAvailability
import MenuModel
import Testing

/// A menu of `items` (JSON) on `zone`'s clock, with its hours.
func scheduledMenu(_ items: String, zone: String = "Europe/Paris") throws -> (Menu, MenuHours) {
    let menu = try Menu(jsonData: Data(#"{"timeZone": "\#(zone)", "items": [\#(items)]}"#.utf8))
    return (menu, try #require(MenuHours(menu: menu)))
}

/// An instant, written as RFC 3339.
func instant(_ text: String) -> Timestamp { try! Timestamp(rfc3339: text) }

/// Opening hours evaluated at instants: what is closed, until when, and the next boundary.
@Suite struct MenuHoursTests {
    /// Breakfast on weekdays 07:00-10:30 with a late bar on Fridays, in Paris (UTC+1 in December).
    let items = #"""
        {"id": "breakfast", "title": "Breakfast", "hours": [{"days": ["mon","tue","wed","thu","fri"], "from": "07:00", "to": "10:30"}],
         "exceptions": [{"date": "2026-12-25", "closed": true}, {"date": "2026-12-24", "hours": [{"from": "08:00", "to": "09:00"}]}],
         "items": [{"id": "congee", "title": "Congee"}, {"id": "youtiao", "title": "Youtiao", "hours": [{"from": "08:00", "to": "12:00"}]}]},
        {"id": "bar", "title": "Bar", "hours": [{"days": ["fri"], "from": "22:00", "to": "02:00"}], "items": [{"id": "beer", "title": "Beer"}]},
        {"id": "tea", "title": "Tea"}
        """#

    @Test func inItsHoursANodeIsOpenAndTheNextBoundaryIsItsEnd() throws {
        let (_, hours) = try scheduledMenu(items)
        // Monday 2026-12-07 08:30 in Paris.
        let state = hours.state(at: instant("2026-12-07T07:30:00Z"))
        #expect(state.closed["breakfast"] == nil && state.closed["youtiao"] == nil)
        #expect(state.closed["bar"] == .some(instant("2026-12-11T21:00:00Z")), "opens Friday 22:00")
        #expect(state.nextChange == instant("2026-12-07T09:30:00Z"), "breakfast ends at 10:30")
    }

    @Test func outsideItsHoursANodeIsClosedUntilItOpens() throws {
        let (_, hours) = try scheduledMenu(items)
        // Monday 11:00: breakfast closed until Tuesday 07:00; youtiao until Tuesday 08:00 (its
        // own hours are open at 11:00, its group's are not).
        let state = hours.state(at: instant("2026-12-07T10:00:00Z"))
        #expect(state.closed["breakfast"] == .some(instant("2026-12-08T06:00:00Z")))
        #expect(state.closed["youtiao"] == .some(instant("2026-12-08T07:00:00Z")), "a child narrows its group")
        #expect(state.closed["congee"] == nil, "a node without hours shows its group's entry")
        #expect(state.nextChange == instant("2026-12-08T06:00:00Z"))
    }

    @Test func aRangeThroughMidnightRunsIntoTheNextDay() throws {
        let (_, hours) = try scheduledMenu(items)
        #expect(hours.state(at: instant("2026-12-12T00:30:00Z")).closed["bar"] == nil, "Saturday 01:30")
        let after = hours.state(at: instant("2026-12-12T01:00:00Z"))
        #expect(after.closed["bar"] == .some(instant("2026-12-18T21:00:00Z")), "closed at 02:00 until next Friday")
    }

    @Test func exceptionsReplaceTheirDatesHours() throws {
        let (_, hours) = try scheduledMenu(items)
        // Christmas Eve (Thursday) 08:00-09:00 only; Christmas (Friday) closed; back on Monday.
        #expect(
            hours.state(at: instant("2026-12-24T06:30:00Z")).closed["breakfast"]
                == .some(instant("2026-12-24T07:00:00Z")))
        #expect(hours.state(at: instant("2026-12-24T07:30:00Z")).nextChange == instant("2026-12-24T08:00:00Z"))
        let christmas = hours.state(at: instant("2026-12-25T08:00:00Z"))
        #expect(christmas.closed["breakfast"] == .some(instant("2026-12-28T06:00:00Z")))
    }

    @Test func aNodeClosedForMonthsStillKnowsWhenItOpens() throws {
        let (_, hours) = try scheduledMenu(
            #"{"id": "summer", "title": "Summer", "hours": [], "exceptions": [{"date": "2027-06-21", "hours": [{"from": "12:00", "to": "14:00"}]}]}"#
        )
        let state = hours.state(at: instant("2026-12-07T10:00:00Z"))
        #expect(state.closed["summer"] == .some(instant("2027-06-21T10:00:00Z")), "CEST: UTC+2")
        let never = try scheduledMenu(#"{"id": "never", "title": "Never", "hours": []}"#).1
        let closed: [String: Timestamp?] = ["never": nil]
        #expect(never.state(at: instant("2026-12-07T10:00:00Z")).closed == closed, "closed, opening never")
    }

    @Test func exceptionsAloneCloseOnlyTheirDates() throws {
        let (_, hours) = try scheduledMenu(
            #"{"id": "shop", "title": "Shop", "exceptions": [{"date": "2026-12-25", "closed": true}]}"#)
        #expect(hours.state(at: instant("2026-12-24T12:00:00Z")).closed.isEmpty)
        #expect(hours.state(at: instant("2026-12-24T12:00:00Z")).nextChange == instant("2026-12-24T23:00:00Z"))
        #expect(
            hours.state(at: instant("2026-12-25T12:00:00Z")).closed["shop"] == .some(instant("2026-12-25T23:00:00Z")))
    }

    @Test func anOverlayAdvancedToAnInstantClosesWhatTheHoursClose() throws {
        let (menu, hours) = try scheduledMenu(items)
        let (overlay, _) = try AvailabilityOverlay().applying(
            [.init(id: "tea", Availability(state: .soldOut)), .init(id: "congee", Availability(state: .paused))],
            on: menu, now: instant("2026-12-07T07:30:00Z"))
        let (evening, changed) = overlay.advanced(to: instant("2026-12-07T18:00:00Z"), hours: hours)
        #expect(evening.revision == overlay.revision + 1)
        #expect(Set(changed) == ["breakfast", "youtiao", "bar"])
        #expect(evening.shownEntries["breakfast"]?.state == .closed)
        #expect(evening.shownEntries["tea"]?.state == .soldOut, "the admin's entries stay")
        let resolved = ResolvedAvailability(evening, on: menu)
        let congee = try #require(menu.node(withID: "congee"))
        #expect(resolved.availability(of: congee)?.state == .paused, "its own entry is nearer than its group's")
        let beer = try #require(menu.node(withID: "beer"))
        #expect(resolved.shown(beer)?.origin == .inherited(from: menu.node(withID: "bar")!))
        let (same, none) = evening.advanced(to: instant("2026-12-07T19:00:00Z"), hours: hours)
        #expect(same == evening && none.isEmpty, "no boundary passed: no revision")
    }

    @Test func aGroupWhoseRowsAreAllClosedShowsClosed() throws {
        let (menu, hours) = try scheduledMenu(
            #"{"id": "g", "title": "G", "items": [{"id": "a", "title": "A", "hours": [{"from": "07:00", "to": "08:00"}]}, {"id": "b", "title": "B", "hours": [{"from": "09:00", "to": "10:00"}]}]}"#
        )
        let (overlay, _) = AvailabilityOverlay().advanced(to: instant("2026-12-07T12:00:00Z"), hours: hours)
        let shown = ResolvedAvailability(overlay, on: menu).shown(try #require(menu.node(withID: "g")))
        #expect(shown?.origin == .computed && shown?.availability.state == .closed)
        #expect(shown?.availability.until == instant("2026-12-08T06:00:00Z"), "when the first row opens")
    }
}
