import DurableTestSupport
import Foundation
import HTTPTestSupport
import MenuModel
import MenuTestSupport
import Synchronization
import Testing

@testable import MenuSessions
@testable import MenuSessionsDurable

/// A menu reload is one revision of every durable session, with a reload entry in its feed, as in
/// memory; the journal records each reload once, and a restart gives every session the revision
/// memory showed (or would have shown once the session was carried over).
@Suite("Durable: a reload is one revision of every session, through restarts")
struct DurableReloadRevisionTests {
    /// The fixture menu with one more row in group c and a new title for b: a reload with splices.
    static let changedMenu = DurableFixtures.menu(
        DurableFixtures.menuJSON.replacingOccurrences(
            of: #"{"id": "c1", "title": "C1"}"#, with: #"{"id": "c1", "title": "C1"}, {"id": "c2", "title": "C2"}"#
        )
        .replacingOccurrences(of: #""title": "B""#, with: #""title": "B, renamed""#))

    @Test(
        "a session read, one written and one left alone after a reload all restart one revision up, from the journal and from a snapshot"
    )
    func everySessionRestartsOneRevisionUpPerReload() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory)
        var sessions: [String: SessionID] = [:]
        for name in ["read", "written", "alone"] {
            let id = try first.create()
            _ = try first.apply(.toggle(groupID: "c"), to: id)
            sessions[name] = id
        }
        let second = first.currentMenu.succeeded(by: Self.changedMenu, keepingPrevious: true)
        #expect(try first.snapshot(of: sessions["read"]!, in: second).revision == 2, "the carry-over is a revision")
        #expect(try first.apply(.toggle(groupID: "b"), to: sessions["written"]!, in: second).revision == 3)
        first.close()  // no adopt, no snapshot: the journal alone

        let reopened = try durableOpen(directory, menu: Self.changedMenu)
        #expect(try reopened.snapshot(of: sessions["read"]!).revision == 2)
        #expect(try reopened.snapshot(of: sessions["written"]!).revision == 3)
        #expect(
            try reopened.snapshot(of: sessions["alone"]!).revision == 2,
            "one never carried over counts the reload it would have been carried over by")
        #expect(try reopened.apply(.toggle(groupID: "a"), to: sessions["alone"]!).revision == 3)
        // A reload in this process, carried over by adopt, which writes a snapshot.
        let third = reopened.currentMenu.succeeded(by: DurableFixtures.menu(), keepingPrevious: true)
        reopened.adopt(third)
        #expect(try reopened.snapshot(of: sessions["read"]!, in: third).revision == 3)
        reopened.close()

        let again = try durableOpen(directory)
        defer { again.close() }
        #expect(again.recovery.snapshotBytes > 0, "the sessions came from adopt's snapshot")
        #expect(try again.snapshot(of: sessions["read"]!).revision == 3)
        #expect(try again.snapshot(of: sessions["written"]!).revision == 4)
        #expect(try again.snapshot(of: sessions["alone"]!).revision == 4)
        #expect(try again.snapshot(of: sessions["alone"]!).revision == 4, "a restart alone is no reload")
    }

    @Test("a snapshot written while a session is still on the older menu holds its revision as carried over")
    func aSnapshotCarriesTheRevisionsOfSessionsNotYetCarriedOver() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let store = try durableOpen(directory)
        let stale = try store.create()
        _ = try store.apply(.toggle(groupID: "c"), to: stale)
        let other = try store.create()
        let second = store.currentMenu.succeeded(by: Self.changedMenu, keepingPrevious: true)
        _ = try store.snapshot(of: other, in: second)  // journals the reload, carries only `other`
        try store.compactNow()
        store.close()
        let reopened = try durableOpen(directory, menu: Self.changedMenu)
        defer { reopened.close() }
        #expect(try reopened.snapshot(of: stale).revision == 2)
        #expect(try reopened.snapshot(of: other).revision == 1)
    }

    @Test(
        "the feed answers a reload entry with the reload's splices, and a write's If-Match revision after it counts it"
    )
    func theFeedAnswersTheReloadEntry() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let store = try durableOpen(directory)
        defer { store.close() }
        let id = try store.create()
        _ = try store.apply(.toggle(groupID: "c"), to: id)  // c open: its new row c2 shows
        let second = store.currentMenu.succeeded(by: Self.changedMenu, keepingPrevious: true)
        let feed = try store.changes(of: id, since: 0, in: second)
        #expect(feed.revision == 2)
        let entries = try #require(feed.entries)
        #expect(entries.count == 2 && entries[0].reload == nil)
        let mark = try #require(entries[1].reload)
        let diff = try #require(mark.listingDiff(on: second))
        // Rows a, a1, ag, b, c, c1, r: the new c2 comes after c1.
        #expect(diff.changes == [RowChange(at: 6, inserted: 1, removed: 0)])
        #expect(!diff.reconfigured.isEmpty, "b's new title")
        #expect(
            durableError { try store.apply(.toggle(groupID: "a"), to: id, in: second, if: .init(accepting: [1])) }
                == .revisionMismatch(current: 2))
        #expect(try store.apply(.toggle(groupID: "a"), to: id, in: second, if: .init(accepting: [2])).revision == 3)
    }

    @Test(
        "a read on the new menu of a session whose write is still in the journal's hands waits for it: the write's revision, then the reload's"
    )
    func aPinnedSessionIsCarriedOverOnlyAfterItsWrite() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        defer { DurableFaults.clear(in: directory.path) }
        let store = try DurableSessionStore(
            directory: directory.path, menu: DurableFixtures.menu(), fsync: .no, storeTimeout: .seconds(60))
        defer { store.close() }
        let first = store.currentMenu
        let id = try store.create()
        let other = try store.create()
        let second = first.succeeded(by: Self.changedMenu, keepingPrevious: true)
        _ = try store.snapshot(of: other, in: second)  // the reload's record is in the journal now

        DurableFaults.stall(.write, in: directory.path)
        let written = DurableOutcome<Int>()
        let read = DurableOutcome<Int>()
        let writer = Thread { written.set { try store.apply(.toggle(groupID: "c"), to: id, in: first).revision } }
        writer.start()
        #expect(
            eventually { DurableFaults.stalledCalls(in: directory.path) == 1 }, "the write is in the journal's hands")
        let reader = Thread { read.set { try store.snapshot(of: id, in: second).revision } }
        reader.start()
        // Gives the read time to reach its wait; the outcome below holds whichever came first.
        Thread.sleep(forTimeInterval: 0.2)
        DurableFaults.release(.write, in: directory.path)
        #expect(try written.wait() == 1, "the write, computed on the older menu, keeps its revision")
        #expect(try read.wait() == 2, "then the carry-over: one more")
        let entries = try #require(try store.changes(of: id, since: 0, in: second).entries)
        #expect(entries.count == 2 && entries[0].reload == nil && entries[1].reload != nil)
        #expect(
            FlattenedView(menu: second.menu, state: try store.state(of: id, in: second)).isExpanded(
                second.menu.node(withID: "c")!))
    }

    @Test("reload records and records at a reload count round-trip; at count 0 the older, shorter kinds are written")
    func recordsAtAReloadCount() throws {
        let id = SessionID.random()
        let events: [DurableRecord.Event] = [
            .reload(count: 3), .created(id, reloads: 2),
            .groupSet(id, group: "a", isExpanded: true, revision: 4, reloads: 2),
            .state(id, revision: 5, reloads: 3, base: .expanded, total: 1, entries: [.mark("b", mode: .collapsed)])
        ]
        var replay = DurableRecovery.Replay(directory: "/nonexistent", log: { _ in })
        for event in events {
            var bytes: [UInt8] = []
            DurableRecord.append(event, time: 1, to: &bytes)
            let decoded = try #require(DurableRecord.frame(in: bytes, at: 0).flatMap(DurableRecord.decodeEvent)?.event)
            #expect(decoded == event)
            replay.apply(decoded, time: 1)
        }
        #expect(replay.reloads == 3 && replay.sessions[id]?.revision == 5 && replay.sessions[id]?.reloads == 3)
        var older: [UInt8] = []
        var newer: [UInt8] = []
        DurableRecord.append(.created(id), time: 1, to: &older)
        DurableRecord.append(.created(id, reloads: 1), time: 1, to: &newer)
        #expect(older[8] == DurableRecord.Kind.created.rawValue && newer.count == older.count + 8)
        // A reload count of 0 in a reload-count kind is damage, not a record.
        var zero: [UInt8] = []
        DurableRecord.append(.reload(count: 0), time: 1, to: &zero)
        #expect(DurableRecord.frame(in: zero, at: 0).flatMap(DurableRecord.decodeEvent) == nil)
    }
}

/// What a call on another thread returned or threw, once it did.
final class DurableOutcome<Value: Sendable>: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let result = Mutex<Result<Value, any Error>?>(nil)

    func set(_ body: () throws -> Value) {
        let outcome = Result { try body() }
        result.withLock { $0 = outcome }
        done.signal()
    }

    /// Waits (at most ``eventuallyBound``) and answers the outcome.
    func wait() throws -> Value {
        guard done.wait(timeout: .now() + .seconds(Int(eventuallyBound.components.seconds))) == .success else {
            throw DurableOutcomeError.neverFinished
        }
        return try result.withLock { $0! }.get()
    }
}

enum DurableOutcomeError: Error { case neverFinished }
