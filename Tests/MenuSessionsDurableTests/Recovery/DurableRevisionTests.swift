import DurableTestSupport
import MenuTestSupport
import Testing

@testable import MenuSessions
@testable import MenuSessionsDurable

@Suite("Durable: revisions survive a restart, from the journal and from the snapshot")
struct DurableRevisionRestartTests {
    /// Three sessions at revisions 3, 1 and 0 (a no-op write and a read do not count).
    private func write(_ store: DurableSessionStore) throws -> [SessionID: Int] {
        let busy = try store.create()
        for group in ["a", "ag", "a"] { _ = try store.apply(.toggle(groupID: group), to: busy) }
        _ = try store.apply(.set(groupID: "a", isExpanded: true), to: busy)  // a no-op: a is expanded again
        let made = try store.apply(.toggle(groupID: "c"), to: nil).sessionID
        let idle = try store.create()
        _ = try store.state(of: idle)
        return [busy: 3, made: 1, idle: 0]
    }

    @Test func aRestartReplayingTheJournalRestoresEachRevision() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        let expected = try write(first)
        first.close()
        let second = try durableOpen(directory)
        defer { second.close() }
        for (id, revision) in expected { #expect(try second.snapshot(of: id).revision == revision) }
        // The history of splices is not kept: a since before the restart is gone, the current one answers.
        let busy = expected.first { $0.value == 3 }!.key
        #expect(try second.changes(of: busy, since: 2, in: second.currentMenu).entries == nil)
        #expect(try second.changes(of: busy, since: 3, in: second.currentMenu).entries?.isEmpty == true)
        #expect(try second.apply(.toggle(groupID: "b"), to: busy).revision == 4)
    }

    @Test func aRestartFromACompactedSnapshotRestoresEachRevision() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        let expected = try write(first)
        try first.compactNow()
        first.close()
        let second = try durableOpen(directory)
        defer { second.close() }
        for (id, revision) in expected { #expect(try second.snapshot(of: id).revision == revision) }
    }

    @Test func anOlderJournalsGroupSetWithoutARevisionCountsOneRevisionEachAndARevisionIsExact() throws {
        let id = SessionID.random()
        let events: [DurableRecord.Event] = [
            .created(id), .groupSet(id, group: "a", isExpanded: false), .groupSet(id, group: "c", isExpanded: true)
        ]
        var replay = DurableRecovery.Replay(directory: "/nonexistent", log: { _ in })
        for event in events { replay.apply(try Self.roundTrip(event), time: 1) }
        #expect(replay.sessions[id]?.revision == 2)
        // With its revision, a record replayed twice (a journal the snapshot already holds) sets it once.
        let revised = DurableRecord.Event.groupSet(id, group: "a", isExpanded: true, revision: 7)
        for _ in 0 ..< 2 { replay.apply(try Self.roundTrip(revised), time: 2) }
        #expect(replay.sessions[id]?.revision == 7)
    }

    /// `event` written as a journal record and read back.
    private static func roundTrip(_ event: DurableRecord.Event) throws -> DurableRecord.Event {
        var bytes: [UInt8] = []
        DurableRecord.append(event, time: 1, to: &bytes)
        let decoded = try #require(DurableRecord.frame(in: bytes, at: 0).flatMap(DurableRecord.decodeEvent)?.event)
        #expect(decoded == event)
        return decoded
    }
}
