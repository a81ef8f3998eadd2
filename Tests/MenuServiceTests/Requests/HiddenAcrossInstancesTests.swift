import Foundation
import HTTPCore
import MenuAvailability
import MenuModel
import MenuService
import MenuServiceTestSupport
import MenuSessions
import MenuSessionsRedis
import RedisTestSupport
import Testing

/// Two instances on one Redis, one of them not yet serving the listing without a hidden dish
/// (its overlay arrives within a second in production; here it is applied by hand): the session
/// carried over by the first is not "history lost" on the second. A long poll there is held, and
/// answered with the reload entry's splices once the second serves that listing too.
@Suite struct HiddenAcrossInstancesTests {
    let now = Timestamp(milliseconds: 1_800_000_000_000)

    @Test func aLongPollOnAnInstanceBehindIsHeldUntilItServesTheListingAndThenToldTheSplice() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        let menu = try Menu(jsonData: Data(HiddenWhenUnavailableTests.config.utf8))
        var stores: [RedisSessionStore] = []
        defer { for store in stores { store.stop() } }
        let clock = now
        let (a, b) = (0 ..< 2).map { _ in
            let store = RedisSessionStore(
                endpoint: redis.endpoint, options: RedisStoreOptions(prefix: "hide:"), menu: MenuGeneration(menu))
            stores.append(store)
            return MenuAPI(store: store, maxLimit: 500, clock: { clock })
        }.pair
        let session = try #require(a.call("POST", "/sessions").json["sessionId"] as? String)
        let soldOut = [AvailabilityOverlay.Change(id: "fish", Availability(state: .soldOut))]

        _ = try a.updateAvailability(soldOut, now: now)
        #expect(a.call("GET", "/count", session: session).json["revision"] as? Int == 1, "carried over on A")

        var route = -1
        let poll = b.reply(
            to: HTTPRequest(
                method: "GET", path: "/changes", query: [("since", "0"), ("wait", "30")],
                headers: [("x-session-id", session)], body: []), route: &route)
        guard case .deferred(let held) = poll else {
            Issue.record("B answered at once instead of waiting to serve the listing: \(poll.waitForResponse().json)")
            return
        }
        _ = try b.updateAvailability(soldOut, now: now)
        let answer = held.waitForResponse()
        #expect(answer.status == 200, "\(answer.json)")
        let entries = answer.json["changes"] as? [[String: Any]] ?? []
        let reload = entries.first?["reload"] as? [String: Any]
        #expect(
            entries.count == 1 && reload?["changes"] as? [[String: Int]] == [["at": 1, "inserted": 0, "removed": 1]])
        #expect(
            answer.json["version"] as? String == b.call("GET", "/count", session: session).json["version"] as? String)
    }
}

extension Array {
    /// The first two elements.
    fileprivate var pair: (Element, Element) { (self[0], self[1]) }
}
