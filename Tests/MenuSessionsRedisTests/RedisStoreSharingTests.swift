import Foundation
import HTTPTestSupport
import MenuModel
import MenuSessions
import MenuTestSupport
import NaiveReference
import Synchronization
import Testing

@testable import MenuSessionsRedis

/// Two stores on one Redis, as two server instances: sessions move between them, concurrent
/// writes from both lose nothing, and each sees the other's writes through its cache.
@Suite("Redis store: two instances share sessions", .serialized)
struct RedisStoreSharingTests {
    @Test func aSessionCreatedOnOneInstanceIsReadAndChangedOnTheOther() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let one = try fixture.store(MenuGeneration(menu))
        let two = try fixture.store(MenuGeneration(menu))
        let id = try one.create()
        _ = try one.apply(.toggle(groupID: "a"), to: id)
        #expect(try two.snapshot(of: id).revision == 1)
        #expect(expandedGroups(try two.state(of: id), on: menu) == ["c", "e"])
        let written = try two.apply(.toggle(groupID: "d"), to: id, if: RevisionCondition(accepting: [1]))
        #expect(written.revision == 2)
        // The other instance read the session before: its cached copy is invalidated by Redis.
        #expect(eventually { (try? one.snapshot(of: id).revision) == 2 })
        #expect(expandedGroups(try one.state(of: id), on: menu) == ["c", "d", "e"])
        #expect(try one.changes(of: id, since: 0, in: one.currentMenu).entries?.count == 2)
        #expect(throws: SessionStoreError.revisionMismatch(current: 2)) {
            try one.apply(.toggle(groupID: "c"), to: id, if: RevisionCondition(accepting: [1]))
        }
    }

    @Test func concurrentTogglesFromBothInstancesLoseNothing() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        // Three writers of one session on each store queue for its gate, each waiting at most the
        // Redis timeout: 5 s, so a loaded machine (ASan, other builds) makes them slow, not refused.
        let stores = [
            try fixture.store(MenuGeneration(menu), timeout: .seconds(5)),
            try fixture.store(MenuGeneration(menu), timeout: .seconds(5))
        ]
        let id = try stores[0].create()
        let groups = ["a", "c", "d", "e"]
        let threadsPerStore = 3
        let togglesPerThread = 40
        // Acknowledged toggles per group, and refusals (any error fails the test below).
        let acknowledged = Mutex<[String: Int]>([:])
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for (storeIndex, store) in stores.enumerated() {
            for thread in 0 ..< threadsPerStore {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    for step in 0 ..< togglesPerThread {
                        let target = groups[(storeIndex + thread + step) % groups.count]
                        do {
                            _ = try store.apply(.toggle(groupID: target), to: id)
                            acknowledged.withLock { $0[target, default: 0] += 1 }
                        } catch {
                            failures.withLock { $0.append("\(target): \(error)") }
                        }
                    }
                }
            }
        }
        group.wait()
        #expect(failures.withLock { $0 } == [])
        let counts = acknowledged.withLock { $0 }
        let total = counts.values.reduce(0, +)
        #expect(total == 2 * threadsPerStore * togglesPerThread)
        // A sequential replay of the acknowledged toggles: each group flipped once per toggle.
        var replay = FlattenedView(menu: menu)
        for (target, count) in counts { for _ in 0 ..< count { _ = try replay.toggle(target) } }
        for store in stores {
            #expect(eventually { (try? store.snapshot(of: id).revision) == total })
            #expect(expandedGroups(try store.state(of: id), on: menu) == expandedGroups(replay.state, on: menu))
        }
    }

    @Test func aReloadToAnotherMenuOnOneInstanceKeepsSessionsWorkingOnBoth() throws {
        let fixture = try RedisStoreFixture()
        let old = try storeTestMenu()
        // The next version: b gone, d open by default, a new group f.
        let new = try makeMenu([
            .group("a", expanded: true, [.row("a1"), .row("b")]),
            .group("c", expanded: true, [.row("c1"), .row("c2")]),
            .group("d", expanded: true, [.row("d1")]),
            .group("f", expanded: false, [.row("f1")])
        ])
        let first = MenuGeneration(old)
        let reloading = try fixture.store(first)
        let staying = try fixture.store(MenuGeneration(old))
        let id = try reloading.create()
        _ = try reloading.apply(.toggle(groupID: "b"), to: id)
        _ = try reloading.apply(.toggle(groupID: "c"), to: id)
        _ = try reloading.snapshot(of: id)
        let report = reloading.adopt(first.succeeded(by: new))
        #expect(report.rebased <= 1 && report.remaining == 0)
        // On the new menu: b is gone (ignored), c stays collapsed; the revision stays.
        let snapshot = try reloading.snapshot(of: id)
        #expect(snapshot.revision == 2 && expandedGroups(snapshot.state, on: new) == ["a", "d"])
        // The splices were of the old menu's rows: the new one answers none but the current revision.
        #expect(try reloading.changes(of: id, since: 1, in: reloading.currentMenu).entries == nil)
        #expect(try reloading.changes(of: id, since: 2, in: reloading.currentMenu).entries?.isEmpty == true)
        // A write on the new menu; the old instance reads and writes it on its own menu.
        _ = try reloading.apply(.toggle(groupID: "f"), to: id)
        #expect(eventually { (try? staying.snapshot(of: id).revision) == 3 })
        #expect(expandedGroups(try staying.state(of: id), on: old) == ["a", "e"])
        #expect(try staying.changes(of: id, since: 2, in: staying.currentMenu).entries == nil)
        _ = try staying.apply(.toggle(groupID: "e"), to: id)
        #expect(try staying.changes(of: id, since: 3, in: staying.currentMenu).entries?.count == 1)
        #expect(eventually { (try? reloading.snapshot(of: id).revision) == 4 })
        #expect(expandedGroups(try reloading.state(of: id), on: new) == ["a", "d"])
    }
}
