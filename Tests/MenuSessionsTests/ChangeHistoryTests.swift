import MenuModel
import MenuSessions
import Testing

@Suite("ChangeHistory: the last splices of a session, bounded")
struct ChangeHistoryTests {
    @Test func keepsTheNewestEntriesInOrderWithTheirRevisionsAndNullSplices() {
        var history = ChangeHistory(revision: 5)
        let splices: [RowChange?] = [
            RowChange(at: 1, inserted: 0, removed: 9), nil, RowChange(at: 2_000_000_000, inserted: 7, removed: 0),
            RowChange(at: 3, inserted: 0, removed: 0), RowChange(at: 4, inserted: 0, removed: 1_500_000_000)
        ]
        for splice in splices { history.record(.splice(splice), capacity: 3) }
        #expect(history.endRevision == 10)
        #expect(history.startRevision == 7)
        #expect(history.entries(since: 6) == nil)  // older than what is kept
        #expect(history.entries(since: 11) == nil)  // past the revision
        let kept = history.entries(since: 7)!
        #expect(kept.map(\.revision) == [8, 9, 10])
        #expect(kept.map(\.change) == Array(splices.suffix(3)))
        #expect(history.entries(since: 10)!.isEmpty)
    }

    @Test func aCapacityOf0KeepsTheRevisionButNoSplice() {
        var history = ChangeHistory(revision: 0)
        history.record(.splice(RowChange(at: 1, inserted: 1, removed: 0)), capacity: 0)
        #expect(history.endRevision == 1)
        #expect(history.entries(since: 0) == nil)
        #expect(history.entries(since: 1)!.isEmpty)
    }

    @Test func clearingForgetsTheSplicesAndKeepsTheRevision() {
        var history = ChangeHistory(revision: 0)
        history.record(.splice(nil), capacity: 8)
        history.record(.splice(nil), capacity: 8)
        history.clear()
        #expect(history.endRevision == 2 && history.startRevision == 2)
    }
}
