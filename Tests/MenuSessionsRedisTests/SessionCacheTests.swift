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
        #expect(
            fill.tracking == .init(clientID: 9, generation: 2) && cache.finishFill(fill, 3)
                && cache.value(of: stale) == 3)
    }

    @Test func theBoundHoldsAndAnEntryReadSinceTheHandPassedSurvivesAnEviction() throws {
        let (cache, _) = Self.make(capacity: 16 * 4)
        // Ids of one shard (shards by the low bits), so the per-shard bound of 4 is reached.
        let ids = (0 ..< 12).map { SessionID(high: UInt64($0), low: 16 * UInt64($0)) }
        for (value, id) in ids.prefix(4).enumerated() {
            #expect(cache.finishFill(try #require(cache.beginFill(id)), value))
        }
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

    @Test func readsOfIdsThatNameNoSessionNeverEvictARealSessionsEntry() throws {
        let (cache, _) = Self.make(capacity: 16 * 4)
        // Ids of one shard (shards by the low bits): four real sessions fill its bound of 4.
        let real = (0 ..< 4).map { SessionID(high: UInt64($0), low: 16 * UInt64($0)) }
        for (value, id) in real.enumerated() { #expect(cache.finishFill(try #require(cache.beginFill(id)), value)) }
        // A client reads 1,000 ids of its own making: each read begins a fill, finds no session, cancels.
        for invented in 0 ..< 1_000 {
            let id = SessionID(high: UInt64(1_000 + invented), low: 16 * UInt64(1_000 + invented))
            let fill = try #require(cache.beginFill(id))
            cache.cancelFill(fill)
        }
        for (value, id) in real.enumerated() { #expect(cache.value(of: id) == value) }
        #expect(cache.count == 4)
    }

    @Test func fillsInFlightPastTheirBoundAreNotCachedAndTakeNoPlace() throws {
        let (cache, _) = Self.make(capacity: 16 * 4)
        let real = SessionID(high: 1, low: 0)
        #expect(cache.finishFill(try #require(cache.beginFill(real)), 1))
        let inFlight = (0 ..< SessionCache<Int>.pendingPerShard).map {
            SessionID(high: UInt64(2 + $0), low: 16 * UInt64(1 + $0))
        }
        let fills = inFlight.compactMap { cache.beginFill($0) }
        #expect(fills.count == SessionCache<Int>.pendingPerShard)
        #expect(cache.beginFill(SessionID(high: 99_999, low: 16 * 99_999)) == nil)  // read from Redis, not cached
        #expect(cache.value(of: real) == 1)
        for fill in fills { cache.cancelFill(fill) }
        #expect(cache.beginFill(SessionID(high: 99_999, low: 16 * 99_999)) != nil)
    }

    @Test func theBytesOfTheValuesStayWithinTheByteBound() throws {
        let listener = Listener()
        let cache = SessionCache<Int>(capacity: 1_000, byteCapacity: 16 * 100, weigh: { $0 }) {
            listener.generation.withLock { $0 }
        }
        cache.subscribed(clientID: 7, generation: 1)
        let ids = (0 ..< 10).map { SessionID(high: UInt64($0), low: 16 * UInt64($0)) }  // one shard: 100 bytes
        for id in ids { #expect(cache.finishFill(try #require(cache.beginFill(id)), 30)) }
        #expect(cache.count == 3 && cache.bytes == 90)
        #expect(cache.value(of: ids[9]) == 30)  // the newest is kept
        #expect(cache.finishFill(try #require(cache.beginFill(SessionID(high: 50, low: 16 * 50))), 101))
        #expect(cache.value(of: SessionID(high: 50, low: 16 * 50)) == nil)  // over the shard's bytes alone: not kept
        #expect(cache.bytes <= 100)
        cache.flush()
        #expect(cache.bytes == 0)
    }
}
