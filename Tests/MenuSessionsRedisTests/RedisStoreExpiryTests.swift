import HTTPTestSupport
import MenuModel
import MenuSessions
import MenuTestSupport
import RedisClient
import RedisTestSupport
import Testing

@testable import MenuSessionsRedis

/// The idle time to live in Redis: set by every write, refreshed by reads only once a quarter
/// of it has passed (a cached read costs no command until then), and a session past it is gone.
@Suite("Redis store: the idle time to live", .serialized)
struct RedisStoreExpiryTests {
    static func millisecondsLeft(_ fixture: RedisStoreFixture, _ id: SessionID) -> Int {
        if case .integer(let milliseconds) = fixture.server.command("PTTL", "test:s:\(id)") { return milliseconds }
        return -3
    }

    @Test(arguments: [true, false])
    func readsRefreshTheTimeToLiveOnlyOnceAQuarterOfItHasPassed(cache: Bool) throws {
        let fixture = try RedisStoreFixture()
        let store = try fixture.store(MenuGeneration(try storeTestMenu()), cache: cache, ttl: .seconds(60))
        let id = try store.create()
        #expect(Self.millisecondsLeft(fixture, id) > 55_000)
        let before = fixture.calls()["pexpire"]!
        for _ in 0 ..< 50 { _ = try store.snapshot(of: id) }
        #expect(fixture.calls()["pexpire"]! == before)  // due 15 s after the write at the earliest
        // As if 50 s had passed: 10 s left, under 3/4 of the TTL, so the next read from Redis
        // refreshes it (the PEXPIRE here invalidates the cached copy).
        #expect(fixture.server.command("PEXPIRE", "test:s:\(id)", "10000") == .integer(1))
        #expect(
            eventually {
                _ = try? store.snapshot(of: id)
                return Self.millisecondsLeft(fixture, id) > 50_000
            })
        #expect(try store.apply(.toggle(groupID: "a"), to: id).revision == 1)
        #expect(Self.millisecondsLeft(fixture, id) > 55_000)
        // Idle past its TTL: gone, for reads and writes.
        #expect(fixture.server.command("PEXPIRE", "test:s:\(id)", "1") == .integer(1))
        #expect(eventually { fixture.server.command("EXISTS", "test:s:\(id)") == .integer(0) })
        #expect(eventually { (try? store.snapshot(of: id)) == nil })  // the cache hears of it from Redis
        #expect(throws: SessionStoreError.unknownSession) { try store.apply(.toggle(groupID: "a"), to: id) }
    }

    @Test func withoutATimeToLiveASessionNeverExpires() throws {
        let fixture = try RedisStoreFixture()
        let store = try fixture.store(MenuGeneration(try storeTestMenu()), ttl: nil)
        let id = try store.create()
        _ = try store.apply(.toggle(groupID: "a"), to: id)
        _ = try store.snapshot(of: id)
        #expect(Self.millisecondsLeft(fixture, id) == -1)
    }
}
