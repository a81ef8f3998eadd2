import Testing
import MenuSessions
import MenuTestSupport

@Suite("In-memory store: revisions count the writes that change a session")
struct InMemoryRevisionTests {
    @Test func revisionsFollowTheRulesAndAConditionalWriteIsCheckedWithIt() throws {
        let store = InMemorySessionStore(menu: try sichuanMenu())
        #expect(RevisionScenario.trail(of: store, parent: "drinks", child: "beer") == RevisionScenario.expectedTrail)
    }
}
