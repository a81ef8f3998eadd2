import Foundation
import HTTPTestSupport
import MenuModel
import MenuSessions
import MenuTestSupport
import RedisClient
import RedisTestSupport
import Testing

@testable import MenuSessionsRedis

/// The cache and this instance's own writes: tracking is `NOLOOP`, so Redis does not report a
/// connection's own writes back and the copy a write leaves is served; every other client's
/// write is still reported (the scripts read the key last, since a write ends its tracking);
/// a copy Redis has not confirmed for `cacheMaxAge` is read again; a lost connection's copies go.
@Suite("Redis store: own writes stay cached, other writes still reach the cache", .serialized)
struct RedisStoreOwnWritesTests {
    @Test func aReadAfterThisInstancesOwnWriteCostsNoRedisCommand() throws {
        let fixture = try RedisStoreFixture()
        let store = try fixture.store(MenuGeneration(try storeTestMenu()))
        let id = try store.create()
        let before = fixture.calls()
        for revision in 1 ... 5 {
            #expect(try store.apply(.toggle(groupID: "a"), to: id).revision == revision)
            #expect(try store.snapshot(of: id).revision == revision)
        }
        let after = fixture.calls()
        #expect(after["evalsha"] == before["evalsha"]! + 5)
        // The write script reads the record once (an HMGET counted inside it); the five reads: none,
        // from the copy each write left.
        #expect(after["hmget"] == before["hmget"]! + 5)
    }

    @Test func anotherInstancesWriteAfterAnOwnWriteIsStillReported() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let one = try fixture.store(MenuGeneration(menu))
        let two = try fixture.store(MenuGeneration(menu))
        let id = try one.create()
        var revision = 0
        for _ in 0 ..< 4 {
            revision = try one.apply(.toggle(groupID: "c"), to: id).revision
            #expect(try one.snapshot(of: id).revision == revision)  // one's own write, cached
            revision = try two.apply(.toggle(groupID: "d"), to: id).revision
            // Only the invalidation can tell `one` (an hour of cacheMaxAge): its write must have
            // left the key tracked.
            let expected = revision
            #expect(eventually { (try? one.snapshot(of: id).revision) == expected })
        }
        #expect(revision == 8)
    }

    @Test func aTTLRefreshLeavesTheSessionTracked() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let one = try fixture.store(MenuGeneration(menu), ttl: .seconds(2))
        let two = try fixture.store(MenuGeneration(menu), ttl: .seconds(2))
        let id = try one.create()
        #expect(try one.snapshot(of: id).revision == 0)
        #expect(fixture.readsFromCache(one, id))
        // A refresh is due once less than 3/4 of the TTL is left: the next read sends it.
        #expect(
            eventually {
                one.cache?.value(of: id)?.expiresAt.map { $0.milliseconds(since: SessionClock.now()) < 1_400 } == true
            })
        let before = fixture.calls(["evalsha", "pexpire"])
        #expect(try one.snapshot(of: id).revision == 0)
        #expect(
            fixture.calls(["evalsha", "pexpire"]) == [
                "evalsha": before["evalsha"]! + 1, "pexpire": before["pexpire"]! + 1
            ])
        #expect(fixture.readsFromCache(one, id))  // the refresh confirmed the copy: it still serves
        _ = try two.apply(.toggle(groupID: "a"), to: id)
        // Only the invalidation takes the copy out (looking into the cache sends no refresh).
        #expect(eventually { one.cache?.value(of: id) == nil })
        #expect(try one.snapshot(of: id).revision == 1)
    }

    @Test func aCopyRedisHasNotConfirmedForCacheMaxAgeIsReadAgain() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let store = try fixture.store(MenuGeneration(menu), cacheMaxAge: .milliseconds(200))
        let id = try store.create()
        #expect(try store.snapshot(of: id).revision == 0)
        // Redis drops every data connection, and with them the tracking of what they read; the
        // listener (a subscriber) stays. A write then comes through a connection of its own.
        #expect(fixture.server.command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") != .error(""))
        #expect(fixture.server.command("HSET", "test:s:\(id.text)", "r", "5") == .integer(0))
        // The copy is served for at most cacheMaxAge, then read again (the first attempt on the
        // dropped connection fails, the next reconnects).
        #expect(eventually { (try? store.snapshot(of: id).revision) == 5 })
    }

    @Test func aReconnectedConnectionLeavesNothingReadThroughTheLostOne() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let store = try fixture.store(MenuGeneration(menu))
        let cached = try store.create()
        let other = try store.create()
        #expect(try store.snapshot(of: cached).revision == 0)
        #expect(store.cache?.value(of: cached) != nil)
        #expect(fixture.server.command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") != .error(""))
        // A command finds the connection gone (checked first after a second unused; else its
        // request fails with 503) and connects again, and that empties the cache.
        #expect(eventually { (try? store.apply(.toggle(groupID: "a"), to: other)) != nil })
        #expect(store.cache?.value(of: cached) == nil)
    }

    @Test func aThreadsFirstConnectionLeavesTheCacheAsItIs() throws {
        let fixture = try RedisStoreFixture()
        // Without the write pipeline each thread has a connection of its own (with it, every
        // command of a caching store goes through the pipeline's one connection).
        let store = try fixture.store(MenuGeneration(try storeTestMenu()), pipelined: false)
        let cached = try store.create()
        let other = try store.create()
        #expect(try store.snapshot(of: cached).revision == 0)
        #expect(store.cache?.value(of: cached) != nil)
        // Another thread's first Redis call opens the store's second connection: it replaces
        // none, so nothing the first one read is lost.
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? store.session(other, in: store.currentMenu, atLeast: 0, fromRedis: true)
            done.signal()
        }
        done.wait()
        #expect(store.pool.threadCount == 2)
        #expect(store.cache?.value(of: cached) != nil)
    }
}
