import Testing
import MenuSessions
import MenuSessionsDurable
import DurableTestSupport
import MenuTestSupport

@Suite("Durable: revisions count the writes that change a session")
struct DurableRevisionTests {
    @Test func revisionsFollowTheRulesAndAConditionalWriteIsCheckedWithIt() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let store = try durableOpen(directory)
        defer { store.close() }
        #expect(RevisionScenario.trail(of: store, parent: "a", child: "ag") == RevisionScenario.expectedTrail)
    }
}
