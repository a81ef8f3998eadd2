import MenuSessions
import Synchronization
import Testing
@testable import MenuSessionsRedis

/// The cache alone, with the listener's generation as a value the test sets: a fill races
/// invalidations and clears and loses, nothing is served while the listener is down or from an
/// older subscription, and the bound holds with recently read entries kept.
@Suite("Redis store: the invalidated session cache")
struct SessionCacheTests {
    final class Listener: Sendable {
        let generation = Mutex<Int?>(1)
    }

    static func make(capacity: Int = 64) -> (SessionCache<Int>, Listener) {
        let listener = Listener()
        let cache = SessionCache<Int>(capacity: capacity) { listener.generation.withLock { $0 } }
        cache.subscribed(clientID: 7, generation: 1)
        return (cache, listener)
    }

    @Test func aFillIsInstalledOnlyWhenNoInvalidationOrClearCameBetween() throws {
        let (cache, _) = Self.make()
        let id = SessionID.random()
        let fill = try #require(cache.beginFill(id))
        #expect(fill.tracking == .init(clientID: 7, generation: 1))
        #expect(cache.value(of: id) == nil)  // a placeholder is no value
        #expect(cache.finishFill(fill, 1) && cache.value(of: id) == 1)
        // An invalidation between the read and its installation: the read value is dropped.
        let second = try #require(cache.beginFill(id))
        cache.invalidate(id)
        #expect(!cache.finishFill(second, 2) && cache.value(of: id) == nil)
        // A later fill replaces an earlier one's placeholder: the earlier loses.
        let first = try #require(cache.beginFill(id))
        let later = try #require(cache.beginFill(id))
        #expect(!cache.finishFill(first, 3) && cache.finishFill(later, 4) && cache.value(of: id) == 4)
        // A clear in between refuses the fill even though a placeholder of the same key was put again.
        let beforeFlush = try #require(cache.beginFill(id))
        cache.flush()
        #expect(!cache.finishFill(beforeFlush, 5) && cache.value(of: id) == nil && cache.count == 0)
    }

    @Test func nothingIsServedOrFilledWhileTheListenerIsDownOrOnAnotherSubscription() throws {
        let (cache, listener) = Self.make()
        let id = SessionID.random()
        #expect(cache.finishFill(try #require(cache.beginFill(id)), 1))
        listener.generation.withLock { $0 = nil }
        #expect(cache.value(of: id) == nil && cache.beginFill(id) == nil && cache.tracking == nil)
        // The listener is back under generation 2, before the cache heard of it: still nothing.
        listener.generation.withLock { $0 = 2 }
        #expect(cache.value(of: id) == nil && cache.beginFill(id) == nil)
        let stale = SessionID.random()
        cache.subscribed(clientID: 9, generation: 2)
        #expect(cache.value(of: id) == nil && cache.count == 0)
        let fill = try #require(cache.beginFill(stale))
        #expect(fill.tracking == .init(clientID: 9, generation: 2) && cache.finishFill(fill, 3) && cache.value(of: stale) == 3)
    }

    @Test func theBoundHoldsAndAnEntryReadSinceTheHandPassedSurvivesAnEviction() throws {
        let (cache, _) = Self.make(capacity: 16 * 4)
        // Ids of one shard (shards by the low bits), so the per-shard bound of 4 is reached.
        let ids = (0 ..< 12).map { SessionID(high: UInt64($0), low: 16 * UInt64($0)) }
        for (value, id) in ids.prefix(4).enumerated() { #expect(cache.finishFill(try #require(cache.beginFill(id)), value)) }
        #expect(cache.value(of: ids[0]) == 0)  // read: gets a second chance
        #expect(cache.finishFill(try #require(cache.beginFill(ids[4])), 4))
        #expect(cache.count == 4 && cache.value(of: ids[0]) == 0 && cache.value(of: ids[1]) == nil)
        for id in ids[5...] { #expect(cache.finishFill(try #require(cache.beginFill(id)), 0)) }
        #expect(cache.count == 4 && Set(cache.cachedIDs).isSubset(of: Set(ids)))
    }

    @Test func anUpdateChangesOnlyACachedValue() throws {
        let (cache, _) = Self.make()
        let id = SessionID.random()
        cache.update(id) { $0 + 1 }
        #expect(cache.value(of: id) == nil)
        #expect(cache.finishFill(try #require(cache.beginFill(id)), 1))
        cache.update(id) { $0 + 1 }
        #expect(cache.value(of: id) == 2)
        cache.update(id) { _ in nil }
        #expect(cache.value(of: id) == nil && cache.count == 0)
    }
}
