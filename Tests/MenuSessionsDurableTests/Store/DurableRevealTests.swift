import DurableTestSupport
import MenuModel
import MenuSessions
import MenuSessionsDurable
import Testing

/// A reveal sets several groups at once: the durable store journals each of them, in one commit,
/// so that a restart restores them all.
@Suite("Durable: a reveal journals every group it expands")
struct DurableRevealTests {
    @Test("reveal of a node under two collapsed groups, with and without a session, survives a restart")
    func revealSurvivesARestart() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        // ag1 sits under a (expanded by default, collapsed here) and ag (collapsed by default).
        let id = try first.create()
        _ = try first.apply(.set(groupID: "a", isExpanded: false), to: id)
        let revealed = try first.apply(.reveal(nodeID: "ag1"), to: id)
        #expect(revealed.change.groupChange?.index == 3)
        #expect(revealed.change.splice == RowChange(at: 1, inserted: 4, removed: 0))
        // Without a session: a new one holding the reveal (b, collapsed by default, opens).
        let made = try first.apply(.reveal(nodeID: "bg1"), to: nil)
        #expect(made.created)
        let expected = durableExpansion(revealed.state)
        #expect(expected["a"] == true && expected["ag"] == true)
        let expectedMade = durableExpansion(made.state)
        #expect(expectedMade["b"] == true)
        // A reveal of a visible node changes nothing and journals nothing.
        let again = try first.apply(.reveal(nodeID: "ag1"), to: id)
        #expect(again.change.splice == nil && again.state == revealed.state)
        first.close()

        let second = try durableOpen(directory)
        defer { second.close() }
        #expect(durableExpansion(try second.state(of: id)) == expected)
        #expect(durableExpansion(try second.state(of: made.sessionID)) == expectedMade)
    }
}
