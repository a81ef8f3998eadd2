import Foundation
import MenuModel
import MenuTestSupport
import NaiveReference
import Synchronization
import Testing

@testable import MenuSessions

/// A full session table evicts its least recently used session once that one has been idle long
/// enough, and refuses in bounded work otherwise. (Expired deletes and the changed-groups cap are
/// SessionStoreConformanceTests', for every store.)
@Suite("Sessions: eviction at a full table, bounded refusals")
struct SessionEvictionTests {
    private func store(
        _ clock: ManualSessionClock, maxSessions: Int, evictionIdle: Duration = .seconds(60),
        maxChangedGroups: Int = 10_000
    ) throws -> InMemorySessionStore {
        InMemorySessionStore(
            menu: try sichuanMenu(), maxSessions: maxSessions, timeToLive: .seconds(86_400),
            evictionIdle: evictionIdle, maxChangedGroups: maxChangedGroups, clock: clock.now)
    }

    @Test func aFullTableEvictsTheLeastRecentlyUsedSessionIdleForTheEvictionTime() throws {
        let clock = ManualSessionClock()
        let sessions = try store(clock, maxSessions: 3)
        let first = try sessions.create()
        let second = try sessions.create()
        let third = try sessions.create()
        clock.advance(milliseconds: 61_000)
        _ = try sessions.state(of: first)  // used again: now the second is the least recently used
        _ = try sessions.apply(.toggle(groupID: "drinks"), to: third)
        let fourth = try sessions.create()
        #expect(throws: SessionStoreError.unknownSession) { try sessions.state(of: second) }
        for id in [first, third, fourth] { #expect(throws: Never.self) { try sessions.state(of: id) } }
        #expect(sessions.count == 3)
    }

    @Test func aFullTableWhoseSessionsAreAllTooYoungAnswersWithTheWaitUntilOneIsEvictable() throws {
        let clock = ManualSessionClock()
        let sessions = try store(clock, maxSessions: 2)
        let first = try sessions.create()
        clock.advance(milliseconds: 5_000)
        let second = try sessions.create()
        clock.advance(milliseconds: 15_000)  // the oldest has been idle 20 s of the 60 s
        #expect(throws: SessionStoreError.tooManySessions(limit: 2, retryAfterSeconds: 40)) { try sessions.create() }
        #expect(throws: SessionStoreError.tooManySessions(limit: 2, retryAfterSeconds: 40)) {
            try sessions.apply(.toggle(groupID: "drinks"), to: nil)
        }
        for id in [first, second] { #expect(throws: Never.self) { try sessions.state(of: id) } }
    }

    @Test func idleLimitsOfForeverNeitherEvictNorOverflowTheRetryAfter() throws {
        let clock = ManualSessionClock()
        let sessions = InMemorySessionStore(
            menu: try sichuanMenu(), maxSessions: 1, timeToLive: .seconds(Int64.max),
            evictionIdle: .seconds(Int64.max), clock: clock.now)
        _ = try sessions.create()
        #expect(throws: SessionStoreError.tooManySessions(limit: 1, retryAfterSeconds: 86_400)) {
            try sessions.create()
        }
    }

    @Test func aRefusalAtAFullTableLooksAtABoundedNumberOfSessions() throws {
        let clock = ManualSessionClock()
        let held = 5_000
        let sessions = try store(clock, maxSessions: held)
        for _ in 0 ..< held { _ = try sessions.create() }
        let before = sessions.table.sessionsExaminedWhenFull.load(ordering: .relaxed)
        for _ in 0 ..< 10 { #expect(throws: SessionStoreError.self) { try sessions.create() } }
        let perRefusal = (sessions.table.sessionsExaminedWhenFull.load(ordering: .relaxed) - before) / 10
        // One per shard here (each shard's oldest is live); the bound holds whatever the table's size.
        #expect(perRefusal >= 1)
        #expect(
            perRefusal <= SessionTable<InMemorySessionStore.Entry>.shardCount
                * SessionTable<InMemorySessionStore.Entry>.examinedPerShardWhenFull + 1)
        #expect(perRefusal < held / 10)
    }

    @Test func anEvictionAtAFullTableLooksAtABoundedNumberOfSessions() throws {
        let clock = ManualSessionClock()
        let held = 5_000
        let sessions = try store(clock, maxSessions: held)
        for _ in 0 ..< held { _ = try sessions.create() }
        clock.advance(milliseconds: 61_000)
        let before = sessions.table.sessionsExaminedWhenFull.load(ordering: .relaxed)
        for _ in 0 ..< 10 { _ = try sessions.create() }
        let perEviction = (sessions.table.sessionsExaminedWhenFull.load(ordering: .relaxed) - before) / 10
        #expect(
            perEviction <= SessionTable<InMemorySessionStore.Entry>.shardCount
                * SessionTable<InMemorySessionStore.Entry>.examinedPerShardWhenFull + 1)
        #expect(sessions.count == held)
    }

    @Test func expiredSessionsAreRemovedBeforeAnyLiveOneIsEvicted() throws {
        let clock = ManualSessionClock()
        let sessions = InMemorySessionStore(
            menu: try sichuanMenu(), maxSessions: 2, timeToLive: .seconds(60),
            evictionIdle: .seconds(30), clock: clock.now)
        _ = try sessions.create()
        clock.advance(milliseconds: 30_000)
        let young = try sessions.create()
        clock.advance(milliseconds: 30_000)  // the first has expired, the second is evictable
        _ = try sessions.create()
        #expect(throws: Never.self) { try sessions.state(of: young) }
    }
}

/// The shard's least-recently-used list against a plain array of ids in use order.
@Suite("Sessions: a shard's use order matches a naive list")
struct SessionShardOrderTests {
    private struct Stamp: SessionTableEntry {
        var lastUsed: SessionTime
        var heapBytes: Int { 0 }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomInsertsUsesAndRemovalsKeepTheOrderOfANaiveList(seed: UInt64) {
        var random = SplitMix64(state: seed)
        var shard = SessionShard<Stamp>(promotionInterval: 0)
        var naive: [SessionID] = []  // most recently used first
        var time: Int64 = 0
        for _ in 0 ..< 2_000 {
            time += 1
            let now = SessionTime(milliseconds: time)
            switch random.next() % 4 {
            case 0, 1:
                let id = SessionID.random()
                shard.insert(id, Stamp(lastUsed: now))
                naive.insert(id, at: 0)
            case 2 where !naive.isEmpty:
                let id = naive[Int(random.next() % UInt64(naive.count))]
                #expect(shard.use(id, now: now, timeToLive: .max) != nil)
                naive.removeAll { $0 == id }
                naive.insert(id, at: 0)
            case 3 where !naive.isEmpty:
                let id = naive.remove(at: Int(random.next() % UInt64(naive.count)))
                #expect(shard.remove(id) != nil)
            default:
                break
            }
            #expect(shard.leastRecentlyUsed?.id == naive.last)
        }
        #expect(shard.idsInUseOrder() == naive)
        #expect(shard.count == naive.count)
    }

    @Test(arguments: [1, 2] as [UInt64])
    func withLazyPromotionTheOldestEndIsWithinTheIntervalOfTheLeastRecentUse(seed: UInt64) {
        var random = SplitMix64(state: seed)
        let interval: Int64 = 16
        var shard = SessionShard<Stamp>(promotionInterval: interval)
        var lastUse: [SessionID: Int64] = [:]
        var time: Int64 = 0
        var reordered = 0
        for _ in 0 ..< 2_000 {
            time += Int64(random.next() % 3)
            let now = SessionTime(milliseconds: time)
            if random.next() % 3 == 0 || lastUse.isEmpty {
                let id = SessionID.random()
                shard.insert(id, Stamp(lastUsed: now))
                lastUse[id] = time
            } else {
                let id = Array(lastUse.keys)[Int(random.next() % UInt64(lastUse.count))]
                let oldest = shard.leastRecentlyUsed?.id
                _ = shard.use(id, now: now, timeToLive: .max)
                if shard.leastRecentlyUsed?.id != oldest { reordered += 1 }
                lastUse[id] = time
                if lastUse.count > 50, let victim = shard.leastRecentlyUsed?.id {
                    shard.remove(victim)
                    lastUse[victim] = nil
                }
            }
            let oldestUse = shard.leastRecentlyUsed!.lastUsed.milliseconds
            #expect(oldestUse - lastUse.values.min()! < interval)
        }
        #expect(shard.idsInUseOrder().count == lastUse.count)
        #expect(reordered > 0)
    }
}
