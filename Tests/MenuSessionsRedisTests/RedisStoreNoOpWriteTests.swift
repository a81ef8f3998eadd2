import MenuModel
import MenuSessions
import MenuTestSupport
import Testing

@testable import MenuSessionsRedis

/// What only the Redis store promises beside the contract every store keeps
/// (SessionStoreConformanceTests): a write that changes nothing sends no script to Redis.
@Suite("Redis store: a write that changes nothing", .serialized)
struct RedisStoreNoOpWriteTests {
    @Test func aWriteThatChangesNothingSendsNothingAndKeepsTheRevision() throws {
        let fixture = try RedisStoreFixture()
        let store = try fixture.store(MenuGeneration(try storeTestMenu()))
        let id = try store.create()
        _ = try store.apply(.set(groupID: "a", isExpanded: false), to: id)
        let before = fixture.calls()
        #expect(try store.apply(.set(groupID: "a", isExpanded: false), to: id).revision == 1)
        #expect(try store.apply(.setAll(.default), to: id).revision == 2)
        #expect(try store.apply(.setAll(.default), to: id).revision == 2)
        #expect(fixture.calls()["evalsha"] == before["evalsha"]! + 1)
    }
}
