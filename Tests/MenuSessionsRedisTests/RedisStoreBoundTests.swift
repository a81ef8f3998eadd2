import Foundation
import HTTPTestSupport
import MenuModel
import MenuSessions
import MenuTestSupport
import Testing

@testable import MenuSessionsRedis

/// The session bound in Redis itself: instances sharing a prefix hold `--max-sessions` between
/// them, checked atomically with each create; at the bound the least recently used session idle
/// for `--session-evict-idle` goes first, else the create is refused with the wait; expired
/// sessions leave the index; the counts are the prefix's, whichever instance reports them.
@Suite("Redis store: sessions bounded across instances", .serialized)
struct RedisStoreBoundTests {
    @Test func twoInstancesOnOnePrefixHoldAtMostMaxSessionsBetweenThemThenRefuseWithTheWait() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let one = try fixture.store(MenuGeneration(menu), maxSessions: 4, evictionIdle: .seconds(3600))
        let two = try fixture.store(MenuGeneration(menu), maxSessions: 4, evictionIdle: .seconds(3600))
        let ids = [try one.create(), try two.create(), try one.create(), try two.create()]
        for store in [one, two] {
            do {
                _ = try store.create()
                Issue.record("a fifth session was created")
            } catch .tooManySessions(let limit, let retry) {
                #expect(limit == 4)
                #expect((3590 ... 3600).contains(retry))
            } catch {
                Issue.record("unexpected \(error)")
            }
            #expect(throws: SessionStoreError.self) { try store.apply(.toggle(groupID: "a"), to: nil) }
        }
        for id in ids { #expect(try two.snapshot(of: id).revision == 0) }
        #expect(one.sessionCounts.held == 4 && two.sessionCounts.held == 4)
        #expect(one.sessionCounts.created == 4 && one.sessionCounts.evicted == 0)
        try one.delete(ids[0])  // a deletion frees its place at once
        #expect(two.sessionCounts.held == 3)
        _ = try two.create()
    }

    @Test func atTheBoundTheLeastRecentlyUsedIdleSessionIsEvictedOnEveryInstance() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let one = try fixture.store(MenuGeneration(menu), maxSessions: 3, evictionIdle: .zero)
        let two = try fixture.store(MenuGeneration(menu), maxSessions: 3, evictionIdle: .zero)
        // Redis orders them by its clock in milliseconds: each step a few apart.
        let first = try one.create()
        usleep(5_000)
        let second = try two.create()
        usleep(5_000)
        let third = try one.create()
        usleep(5_000)
        _ = try two.apply(.toggle(groupID: "a"), to: first)  // used again: the second is now the least recently used
        usleep(5_000)
        _ = try one.snapshot(of: second)  // cached on one: a read that Redis does not see
        let fourth = try two.create()
        for store in [one, two] {
            #expect(eventually { (try? store.snapshot(of: second)) == nil })
            #expect(throws: SessionStoreError.unknownSession) { try store.snapshot(of: second) }
            for id in [first, third, fourth] { #expect(throws: Never.self) { try store.snapshot(of: id) } }
        }
        #expect(one.sessionCounts.held == 3)
        #expect(two.sessionCounts.evicted == 1 && two.sessionCounts.created == 4)
        #expect(two.evictedHere == 1 && one.evictedHere == 0)  // what each instance's log line counts
    }

    @Test func sessionsWhoseTimeToLiveRanOutLeaveTheirPlaceToNewOnes() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let store = try fixture.store(
            MenuGeneration(menu), ttl: .milliseconds(200), maxSessions: 2, evictionIdle: .seconds(3600))
        _ = try store.create()
        _ = try store.create()
        #expect(throws: SessionStoreError.self) { try store.create() }
        usleep(300_000)
        let fresh = try store.create()
        #expect(try store.snapshot(of: fresh).revision == 0)
        #expect(store.sessionCounts.held == 1 && store.sessionCounts.expired == 2)
    }

    @Test func readsOfMadeUpIdsLeaveEveryRealSessionCached() throws {
        let fixture = try RedisStoreFixture()
        let store = try fixture.store(MenuGeneration(try storeTestMenu()), cacheCapacity: 32)  // 2 a shard
        let real = [try store.create(), try store.create()]
        for id in real { #expect(fixture.readsFromCache(store, id)) }
        for _ in 0 ..< 500 {
            #expect(throws: SessionStoreError.unknownSession) { try store.snapshot(of: SessionID.random()) }
        }
        let before = fixture.calls()
        for id in real { _ = try store.snapshot(of: id) }
        #expect(fixture.calls() == before, "a real session was read from Redis again: a made-up id took its place")
    }
}
