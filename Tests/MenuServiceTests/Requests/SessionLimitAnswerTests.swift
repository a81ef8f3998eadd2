import HTTPCore
import MenuService
import MenuServiceTestSupport
import MenuSessions
import MenuTestSupport
import Testing

/// The session store's limits (the changed-groups cap, eviction, a refusal at a full table) as the
/// service answers them.
@Suite("Sessions: the service's answers to the store's limits")
struct SessionLimitAnswerTests {
    private func store(_ clock: ManualSessionClock, maxSessions: Int, maxChangedGroups: Int) throws
        -> InMemorySessionStore
    {
        InMemorySessionStore(
            menu: try sichuanMenu(), maxSessions: maxSessions, timeToLive: .seconds(86_400),
            evictionIdle: .seconds(60), maxChangedGroups: maxChangedGroups, clock: clock.now)
    }

    @Test func theServiceAnswersTheCapAnEvictionAndARefusalWithTheirCodes() throws {
        let clock = ManualSessionClock()
        let service = MenuAPI(menu: try sichuanMenu(), store: try store(clock, maxSessions: 1, maxChangedGroups: 1))
        let old = try #require(service.call("POST", "/sessions").header("X-Session-Id"))
        #expect(service.call("POST", "/groups/drinks/toggle", session: old).status == 200)
        let capped = service.call("POST", "/groups/beer/toggle", session: old)
        #expect(capped.status == 409)
        #expect(capped.errorCode == "too_many_changes")
        let refused = service.call("POST", "/sessions")
        #expect(refused.status == 429)
        #expect(refused.errorCode == "too_many_sessions")
        #expect(refused.header("Retry-After") == "60")
        clock.advance(milliseconds: 60_000)
        #expect(service.call("POST", "/sessions").status == 201)
        #expect(service.call("GET", "/count", session: old).errorCode == "unknown_session")
        #expect(service.call("DELETE", "/session", session: old).errorCode == "unknown_session")
    }
}
