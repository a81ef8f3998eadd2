import HTTPTestSupport
import MenuModel
import MenuSessions
import MenuTestSupport
import RedisClient
import RedisTestSupport
import Testing

@testable import MenuSessionsRedis

/// The tracking cache against a real redis-server: a repeated read costs no Redis command, a
/// write elsewhere invalidates it, a client's known revision forces a fetch, a flush empties it.
@Suite("Redis store: reads served from the invalidated cache", .serialized)
struct RedisStoreCacheTests {
    @Test func aSecondReadIssuesNoRedisCommand() throws {
        let fixture = try RedisStoreFixture()
        let store = try fixture.store(MenuGeneration(try storeTestMenu()))
        let id = try store.create()
        _ = try store.apply(.toggle(groupID: "a"), to: id)
        #expect(fixture.readsFromCache(store, id))
        let before = fixture.calls()
        for _ in 0 ..< 5 {
            #expect(try store.snapshot(of: id).revision == 1)
            #expect(try store.changes(of: id, since: 0, in: store.currentMenu).entries?.count == 1)
        }
        #expect(fixture.calls() == before)
    }

    @Test func aWriteOnTheOtherInstanceInvalidatesAndAKnownRevisionForcesAFetch() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let reader = try fixture.store(MenuGeneration(menu))
        let writer = try fixture.store(MenuGeneration(menu))
        let id = try writer.create()
        #expect(try reader.snapshot(of: id).revision == 0)
        _ = try writer.apply(.toggle(groupID: "c"), to: id)
        let before = fixture.calls()
        // A client that wrote through the other instance names revision 1: the reader fetches it
        // whether or not the invalidation has arrived (exactly one read either way).
        #expect(try reader.snapshot(of: id, in: reader.currentMenu, atLeast: 1).revision == 1)
        #expect(fixture.calls()["hmget"] == before["hmget"]! + 1)
        _ = try writer.apply(.toggle(groupID: "c"), to: id)
        #expect(eventually { (try? reader.snapshot(of: id).revision) == 2 })
    }

    @Test(arguments: [true, false])
    func writesOfOneSessionOnOneInstanceCostOneRoundTripEachAndStillLoseNothingToTheOther(cache: Bool) throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let store = try fixture.store(MenuGeneration(menu), cache: cache)
        let other = try fixture.store(MenuGeneration(menu), cache: cache)
        let id = try store.create()
        let before = fixture.calls()
        for revision in 1 ... 6 {
            #expect(try store.apply(.toggle(groupID: "a"), to: id).revision == revision)
        }
        // Each write starts from the copy the previous one left (WriteBasis), even once its own
        // invalidation has dropped the cached copy: one EVALSHA each, no read back.
        let after = fixture.calls()
        #expect(after["evalsha"] == (before["evalsha"] ?? 0) + 6)
        #expect((after["hmget"] ?? 0) == (before["hmget"] ?? 0) + 6)  // each script's own read of the record
        // Another instance moves the session on: the next write here, computed on the old copy,
        // is refused by the script and computed again on the record it hands back.
        _ = try other.apply(.toggle(groupID: "c"), to: id)
        let applied = try store.apply(.toggle(groupID: "a"), to: id)
        #expect(applied.revision == 8)
        var expected = FlattenedView(menu: menu)
        _ = try expected.toggle("c")
        _ = try expected.toggle("a")
        #expect(try fixture.store(MenuGeneration(menu), cache: false).snapshot(of: id).state == expected.state)
    }

    @Test func aNoOpOrARefusalIsNeverDecidedOnACopyAnotherInstanceHasOverwritten() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let one = try fixture.store(MenuGeneration(menu))
        let two = try fixture.store(MenuGeneration(menu))
        let id = try one.create()
        _ = try one.apply(.toggle(groupID: "d"), to: id)  // revision 1: d expanded
        let old = try one.session(id, in: one.currentMenu, atLeast: 0, fromRedis: true)
        _ = try two.apply(.toggle(groupID: "d"), to: id)  // revision 2: d collapsed again
        #expect(eventually { (try? one.snapshot(of: id).revision) == 2 })
        // As if the invalidation of revision 2 were still on its way to the first instance (put
        // again while an invalidation still on its way drops it).
        func stale() throws {
            let cache = try #require(one.cache)
            #expect(
                eventually {
                    cache.beginFill(id).map { cache.finishFill($0, old) } == true
                        && cache.value(of: id)?.record.revision == 1
                })
        }
        try stale()
        // On the stale copy d is expanded already: the write is done again on Redis's copy.
        #expect(try one.apply(.set(groupID: "d", isExpanded: true), to: id).revision == 3)
        #expect(eventually { (try? two.state(of: id)).map { expandedGroups($0, on: menu) } == ["a", "c", "d", "e"] })
        try stale()
        #expect(try one.apply(.toggle(groupID: "c"), to: id, if: RevisionCondition(accepting: [3])).revision == 4)
        try stale()
        #expect(throws: SessionStoreError.revisionMismatch(current: 4)) {
            try one.apply(.toggle(groupID: "c"), to: id, if: RevisionCondition(accepting: [1]))
        }
        // A client at revision 4 asking for the changes since: nothing, not 410.
        try stale()
        #expect(try one.changes(of: id, since: 4, in: one.currentMenu).entries?.isEmpty == true)
    }

    @Test func aFlushOfRedisEmptiesTheCacheAndAScriptFlushDoesNotStopWrites() throws {
        let fixture = try RedisStoreFixture()
        let store = try fixture.store(MenuGeneration(try storeTestMenu()))
        let id = try store.create()
        _ = try store.snapshot(of: id)
        #expect(fixture.server.command("SCRIPT", "FLUSH") == .status("OK"))
        #expect(try store.apply(.toggle(groupID: "d"), to: id).revision == 1)
        #expect(fixture.server.command("FLUSHALL") == .status("OK"))
        #expect(eventually { (try? store.snapshot(of: id)) == nil })
        #expect(throws: SessionStoreError.unknownSession) { try store.snapshot(of: id) }
    }

    @Test func cachedAndUncachedReadTimes() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let cached = try fixture.store(MenuGeneration(menu))
        let uncached = try fixture.store(MenuGeneration(menu), cache: false)
        let id = try cached.create()
        _ = try cached.apply(.toggle(groupID: "a"), to: id)
        #expect(fixture.readsFromCache(cached, id))
        let clock = ContinuousClock()
        var revisions = 0
        let cachedTime = try clock.measure {
            for _ in 0 ..< 10_000 { revisions += try cached.snapshot(of: id).revision }
        }
        let uncachedTime = try clock.measure {
            for _ in 0 ..< 10_000 { revisions += try uncached.snapshot(of: id).revision }
        }
        #expect(revisions == 20_000)
        print(
            "Redis store figure: 10k cached reads \(cachedTime), 10k uncached reads (HMGET + PTTL each) \(uncachedTime)"
        )
        // Commands per write and read: 100 × (a toggle, then two reads), on the instance that wrote.
        let before = fixture.calls(["evalsha", "hmget"])
        for _ in 0 ..< 100 {
            _ = try cached.apply(.toggle(groupID: "c"), to: id)
            for _ in 0 ..< 2 { _ = try cached.snapshot(of: id) }
        }
        let after = fixture.calls(["evalsha", "hmget"])
        #expect(after["evalsha"]! - before["evalsha"]! == 100)
        print(
            "Redis store figure: 100 × (toggle + 2 reads): EVALSHA \(after["evalsha"]! - before["evalsha"]!), "
                + "HMGET \(after["hmget"]! - before["hmget"]!)")
    }
}
