import Foundation
import HTTPCore
import MenuAvailability
import MenuService
import MenuServiceTestSupport
import MenuSessions
import MenuTestSupport
import NaiveReference
import Synchronization
import Testing

@testable import MenuModel

/// Availability as a session reads it (issue 27 §2): rows show it, no session's revision moves,
/// the read tags name the overlay so that no page cached before a change is confirmed after it,
/// a write's `If-Match` still names only the session's state; entries end at their time, a
/// reload keeps them by id, and a batch the keeper cannot keep is not served.
@Suite("Availability in the service: rows, tags, expiry, reloads")
struct AvailabilityServiceTests {
    let menu = try! storeTestMenu()
    let now = Timestamp(milliseconds: 1_800_000_000_000)
    var later: Timestamp { now.adding(milliseconds: 3_600_000) }

    private func service(keeper: (any AvailabilityKeeper)? = nil) -> MenuAPI {
        MenuAPI(store: InMemorySessionStore(menu: menu), maxLimit: 500, availabilityKeeper: keeper)
    }

    private static func get(
        _ service: MenuAPI, _ path: String, session: String, ifNoneMatch: String? = nil
    ) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("x-session-id", session)]
        if let ifNoneMatch { headers.append(("if-none-match", ifNoneMatch)) }
        return service.respond(
            to: HTTPRequest(
                method: "GET", path: path, query: path == "/rows" ? [("limit", "500")] : [], headers: headers))
    }

    private static func availability(_ response: HTTPResponse) -> [String: [String: String]] {
        var shown: [String: [String: String]] = [:]
        for row in response.json["rows"] as? [[String: Any]] ?? [] {
            if let availability = row["availability"] as? [String: Any] {
                shown[row["id"] as! String] = availability.compactMapValues { $0 as? String }
            }
        }
        return shown
    }

    @Test func aChangeShowsOnTheRowsAndMovesTheReadTagButNotTheSessionsRevision() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        let before = Self.get(service, "/rows", session: session)
        let tag = try #require(before.header("ETag"))
        #expect(Self.availability(before).isEmpty)

        let update = try service.updateAvailability(
            [.init(id: "c1", Availability(state: .soldOut, until: later, reason: "back at 19:30"))], now: now)
        #expect(update == AvailabilityUpdate(revision: 1, changed: ["c1"]))

        let after = Self.get(service, "/rows", session: session, ifNoneMatch: tag)
        #expect(after.status == 200, "a page cached before the change is not confirmed")
        let newTag = try #require(after.header("ETag"))
        #expect(newTag != tag)
        #expect(after.json["revision"] as? Int == before.json["revision"] as? Int)
        #expect(
            Self.availability(after) == [
                "c1": ["state": "sold_out", "until": later.rfc3339, "reason": "back at 19:30"]
            ])
        #expect(Self.get(service, "/rows", session: session, ifNoneMatch: newTag).status == 304)
        #expect(Self.get(service, "/count", session: session).header("ETag") == newTag)

        // A write names the session's state: a tag from before the change still matches it.
        let write = service.respond(
            to: HTTPRequest(
                method: "POST", path: "/groups/d/toggle", headers: [("x-session-id", session), ("if-match", tag)]))
        #expect(write.status == 200)
        let stale = service.respond(
            to: HTTPRequest(
                method: "POST", path: "/groups/d/toggle", headers: [("x-session-id", session), ("if-match", newTag)]))
        #expect(stale.status == 412, "the write before moved the session's revision")
    }

    @Test func aGroupsEntryShowsOnItsRowsAndAGroupWhoseRowsAllShowOneIsComputed() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        _ = try service.updateAvailability(
            [
                .init(id: "a", Availability(state: .paused, reason: "kitchen")),
                .init(id: "c1", Availability(state: .soldOut, until: later)),
                .init(id: "c2", Availability(state: .soldOut))
            ], now: now)
        let shown = Self.availability(Self.get(service, "/rows", session: session))
        #expect(shown["a"] == ["state": "paused", "reason": "kitchen"])
        #expect(shown["a1"] == ["state": "paused", "reason": "kitchen", "from": "a"])
        #expect(shown["b"] == ["state": "paused", "reason": "kitchen", "from": "a"])
        #expect(shown["c"] == ["state": "sold_out", "until": later.rfc3339])
        #expect(Self.get(service, "/rows", session: session).body.count > 0)
        #expect(shown["d"] == nil && shown["e"] == nil && shown["e1"] == nil)
        let group = try #require(
            (Self.get(service, "/rows", session: session).json["rows"] as? [[String: Any]])?.first {
                $0["id"] as? String == "c"
            })
        #expect((group["availability"] as? [String: Any])?["computed"] as? Bool == true)
        // The count and the tree are as before: a marked row is still a row.
        #expect(Self.get(service, "/count", session: session).json["count"] as? Int == 9)
    }

    @Test func entriesEndAtTheirTimeAndTheReadTagMovesAgain() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        _ = try service.updateAvailability(
            [
                .init(id: "c1", Availability(state: .soldOut, until: now.adding(milliseconds: 1_000))),
                .init(id: "e1", Availability(state: .paused))
            ], now: now)
        let marked = Self.get(service, "/rows", session: session)
        #expect(service.expireAvailability(now: now.adding(milliseconds: 999)) == [])
        #expect(service.expireAvailability(now: now.adding(milliseconds: 1_000)) == ["c1"])
        let after = Self.get(service, "/rows", session: session, ifNoneMatch: marked.header("ETag"))
        #expect(after.status == 200)
        #expect(Self.availability(after).keys.sorted() == ["e", "e1"])
        #expect(service.availabilityEntries(now: now).revision == 2)
        // A batch ends what is due before it applies.
        _ = try service.updateAvailability(
            [.init(id: "d1", Availability(state: .paused, until: now.adding(milliseconds: 5_000)))], now: now)
        _ = try service.updateAvailability(
            [.init(id: "e1", Availability(state: .available))], now: now.adding(milliseconds: 6_000))
        #expect(service.availabilityEntries(now: now.adding(milliseconds: 6_000)).entries.isEmpty)
    }

    @Test func aRefusedBatchChangesNothingAndKeepsTheTag() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        let tag = Self.get(service, "/rows", session: session).header("ETag")
        #expect(throws: AvailabilityUpdateError.self) {
            try service.updateAvailability(
                [.init(id: "c1", Availability(state: .soldOut)), .init(id: "nope", Availability(state: .paused))],
                now: now)
        }
        #expect(Self.get(service, "/rows", session: session).header("ETag") == tag)
        #expect(service.availabilityEntries(now: now).revision == 0)
        // A batch that changes nothing moves nothing either.
        let update = try service.updateAvailability([.init(id: "c1", Availability(state: .available))], now: now)
        #expect(update == AvailabilityUpdate(revision: 0, changed: []))
        #expect(Self.get(service, "/rows", session: session).header("ETag") == tag)
    }

    @Test func aReloadKeepsEntriesWhoseIdsSurviveAndReportsTheOthers() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        _ = try service.updateAvailability(
            [.init(id: "c1", Availability(state: .soldOut)), .init(id: "c2", Availability(state: .paused))], now: now)
        let next = try makeMenu([
            .group("a", expanded: true, [.row("a1"), .group("b", expanded: false, [.row("b1")])]),
            .group("c", expanded: true, [.row("c1"), .row("c3")])
        ])
        service.install(next)
        let served = service.current.availability
        #expect(served.droppedAtReload == ["c2"])
        #expect(served.overlay.entries.keys.sorted() == ["c1"])
        #expect(Self.availability(Self.get(service, "/rows", session: session)).keys.sorted() == ["c1"])
    }

    /// A keeper that fails on demand, recording what it kept.
    final class FlakyKeeper: AvailabilityKeeper {
        let failing = Atomic<Bool>(false)
        let kept = Mutex<[AvailabilityOverlay]>([])
        var keptOverlay: AvailabilityOverlay? { kept.withLock { $0.last } }
        func keep(_ overlay: AvailabilityOverlay, over previous: Int) throws(AvailabilityNotKept) {
            if failing.load(ordering: .relaxed) { throw AvailabilityNotKept("disk full") }
            kept.withLock { $0.append(overlay) }
        }
    }

    @Test func aBatchTheKeeperCannotKeepIsNotServedAndAKeptOneIsReadBackAtStart() throws {
        let keeper = FlakyKeeper()
        let service = service(keeper: keeper)
        _ = try service.updateAvailability([.init(id: "c1", Availability(state: .soldOut))], now: now)
        keeper.failing.store(true, ordering: .relaxed)
        #expect(throws: AvailabilityUpdateError.self) {
            try service.updateAvailability([.init(id: "d1", Availability(state: .paused))], now: now)
        }
        #expect(service.availabilityEntries(now: now).entries.map(\.0) == ["c1"])
        #expect(service.availabilityEntries(now: now).revision == 1)
        // A new service over the kept overlay serves it (a restart with --data-dir).
        let restarted = self.service(keeper: keeper)
        #expect(restarted.availabilityEntries(now: now).entries.map(\.0) == ["c1"])
        #expect(restarted.availabilityEntries(now: now).revision == 1)
    }
}
