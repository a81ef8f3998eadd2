import Dispatch
import Foundation
import HTTPTestSupport
import MenuModel
import MenuSessions
import MenuTestSupport
import NaiveReference
import Testing

@testable import MenuSessionsRedis

/// A menu reload with sessions in Redis: the carry-over is one compare-and-set write of a reload
/// entry, made once by whichever instance on the new menu reads the session first; every
/// instance that keeps the menu before computes the entry's splices; an instance still on the old
/// menu neither carries back nor replays rows it cannot.
@Suite("Redis store: a reload is one revision of the session on every instance", .serialized)
struct RedisStoreReloadTests {
    /// The next version of ``storeTestMenu()``: b gone, d open by default, a new group f.
    static func newMenu() throws -> Menu {
        try makeMenu([
            .group("a", expanded: true, [.row("a1"), .row("b")]),
            .group("c", expanded: true, [.row("c1"), .row("c2")]),
            .group("d", expanded: true, [.row("d1")]),
            .group("f", expanded: false, [.row("f1")])
        ])
    }

    @Test func twoInstancesOnTheNewMenuShareOneReloadEntryAndOneOnTheOldMenuDoesNotCarryBack() throws {
        let fixture = try RedisStoreFixture()
        let old = try storeTestMenu()
        let new = try Self.newMenu()
        let (firstA, firstB) = (MenuGeneration(old), MenuGeneration(old))
        let a = try fixture.store(firstA)
        let b = try fixture.store(firstB)
        let staying = try fixture.store(MenuGeneration(old))
        let id = try a.create()
        _ = try a.apply(.toggle(groupID: "b"), to: id)
        _ = try a.apply(.toggle(groupID: "c"), to: id)
        let rowsBefore = FlattenedView(menu: old, state: try a.state(of: id)).count
        let (newA, newB) = (
            firstA.succeeded(by: new, keepingPrevious: true), firstB.succeeded(by: new, keepingPrevious: true)
        )
        a.adopt(newA)
        b.adopt(newB)
        #expect(try a.snapshot(of: id, in: newA).revision == 3, "the carry-over is one revision")
        #expect(eventually { (try? b.snapshot(of: id, in: newB).revision) == 3 }, "and only one, on both")
        let feed = try b.changes(of: id, since: 2, in: newB)
        let entries = try #require(feed.entries)
        #expect(feed.revision == 3 && entries.count == 1)
        let mark = try #require(entries[0].reload)
        let diff = try #require(mark.listingDiff(on: newB), "B keeps the old menu")
        let rowsAfter = FlattenedView(menu: new, state: try b.state(of: id, in: newB)).count
        #expect(rowsBefore + diff.changes.reduce(0) { $0 + $1.inserted - $1.removed } == rowsAfter)
        // Still on the old menu: the revision is Redis's, the entry is not replayable there.
        #expect(eventually { (try? staying.snapshot(of: id).revision) == 3 })
        #expect(try staying.changes(of: id, since: 2, in: staying.currentMenu).entries == nil)
        #expect(try staying.changes(of: id, since: 3, in: staying.currentMenu).entries?.isEmpty == true)
        // A write on the new menu follows the entry.
        #expect(try b.apply(.toggle(groupID: "f"), to: id, in: newB).revision == 4)
        #expect(eventually { (try? a.snapshot(of: id, in: newA).revision) == 4 })
        let both = try #require(try a.changes(of: id, since: 2, in: newA).entries)
        #expect(both.count == 2 && both[0].reload != nil && both[1].reload == nil && both[1].change != nil)
        // Its cached copy hears of B's write by Redis's notice: it reads 4, never a carry-back's 5.
        #expect(eventually { (try? staying.snapshot(of: id).revision) == 4 })
        #expect(try staying.snapshot(of: id).revision == 4, "the old instance never carried it back")
    }

    @Test func instancesReadingAtOnceCarryEachSessionOverOnce() throws {
        let fixture = try RedisStoreFixture()
        let old = try storeTestMenu()
        let new = try Self.newMenu()
        let firsts = [MenuGeneration(old), MenuGeneration(old)]
        let stores = try firsts.map { try fixture.store($0, pipelined: false) }
        let ids = try (0 ..< 40).map { index in
            let id = try stores[0].create()
            if index % 2 == 0 { _ = try stores[0].apply(.toggle(groupID: "c"), to: id) }
            return id
        }
        let news = firsts.map { $0.succeeded(by: new, keepingPrevious: true) }
        for (store, menu) in zip(stores, news) { store.adopt(menu) }
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            for id in ids { _ = try? stores[index].apply(.toggle(groupID: "d"), to: id, in: news[index]) }
        }
        for (index, id) in ids.enumerated() {
            // Revision before, the carry-over, then both toggles of d (which cancel out).
            let expected = (index % 2 == 0 ? 1 : 0) + 1 + 2
            #expect(try stores[0].snapshot(of: id, in: news[0]).revision == expected)
            let entries = try #require(try stores[1].changes(of: id, since: expected - 3, in: news[1]).entries)
            #expect(entries.map { $0.reload != nil } == [true, false, false])
        }
    }

    @Test func aRecordCarriedOverKeepsItsOriginUntilAWriteOnAnotherMenu() throws {
        let state = RedisSessionRecord.encodeState(PortableState(flips: [.init(id: "c", isExpanded: false)]))
        let record = RedisSessionRecord(revision: 2, state: state, historyVersion: "v1", history: [])
        let carried = record.carried(to: "v2", historyLimit: 64)
        #expect(carried.revision == 3 && carried.historyVersion == "v2" && carried.state == state)
        #expect(ReloadOrigin(carried.origin) == ReloadOrigin(version: "v1", state: state))
        #expect(carried.entries(since: 2, menuVersion: "v2") == [RedisHistory.Entry(revision: 3, entry: nil)])
        let written = carried.advanced(to: [], entry: .splice(nil), menuVersion: "v2", historyLimit: 64)
        #expect(written.origin == carried.origin && written.entries(since: 2, menuVersion: "v2")?.count == 2)
        let elsewhere = written.advanced(to: [], entry: .splice(nil), menuVersion: "v3", historyLimit: 64)
        #expect(elsewhere.origin.isEmpty && elsewhere.entries(since: 4, menuVersion: "v3")?.count == 1)
        #expect(ReloadOrigin([]) == nil && ReloadOrigin([5, 1]) == nil)
    }
}
