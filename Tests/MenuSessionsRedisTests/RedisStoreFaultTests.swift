import HTTPTestSupport
import MenuModel
import MenuSessions
import MenuTestSupport
import RedisClient
import RedisTestSupport
import Testing

@testable import MenuSessionsRedis

/// Redis stopped, resumed and restarted under a store: calls fail with `.unavailable` naming the
/// endpoint within a bounded wait, and work again by themselves; an append-only Redis keeps
/// sessions over a restart. Also the record's size in Redis.
@Suite("Redis store: Redis paused, restarted", .serialized)
struct RedisStoreFaultTests {
    static func isUnavailable(_ body: () throws(SessionStoreError) -> Void) -> String? {
        do throws(SessionStoreError) {
            try body()
            return nil
        } catch {
            if case .unavailable(let reason) = error { return reason }
            return nil
        }
    }

    @Test(arguments: [true, false])
    func aPausedRedisAnswersUnavailableAndAResumedOneServesAgain(cache: Bool) throws {
        let fixture = try RedisStoreFixture()
        let store = try fixture.store(MenuGeneration(try storeTestMenu()), cache: cache, timeout: .milliseconds(200))
        let id = try store.create()
        #expect(store.readinessProblem() == nil)
        fixture.server.pause()
        defer { fixture.server.resume() }
        // A write always reaches Redis; a read too once the listener has given up (or with no cache).
        let reason = Self.isUnavailable { () throws(SessionStoreError) in
            _ = try store.apply(.toggle(groupID: "a"), to: id)
        }
        #expect(
            reason?.hasPrefix(store.endpointName) == true && store.endpointName.hasPrefix("redis 127.0.0.1:"),
            "\(reason ?? "no error")")
        #expect(Self.isUnavailable { () throws(SessionStoreError) in _ = try store.create() } != nil)
        let problem = store.readinessProblem()
        #expect(problem?.hasPrefix(store.endpointName) == true)
        print("Redis store: with Redis paused, a write answered \"\(reason ?? "")\"; /readyz: \"\(problem ?? "")\"")
        #expect(
            eventually { Self.isUnavailable { () throws(SessionStoreError) in _ = try store.snapshot(of: id) } != nil })
        fixture.server.resume()
        #expect(eventually { (try? store.apply(.toggle(groupID: "c"), to: id)) != nil })
        #expect(store.readinessProblem() == nil)
        let revision = try store.snapshot(of: id).revision
        #expect(revision >= 1 && revision <= 2)  // the toggle of a answered 503 may or may not have landed
    }

    @Test func anAppendOnlyRedisKeepsSessionsOverARestart() throws {
        let fixture = try RedisStoreFixture(appendOnly: true)
        let menu = try storeTestMenu()
        let store = try fixture.store(MenuGeneration(menu))
        let id = try store.create()
        _ = try store.apply(.toggle(groupID: "d"), to: id)
        try fixture.server.restart()
        #expect(eventually { (try? store.snapshot(of: id).revision) == 1 })
        #expect(expandedGroups(try store.state(of: id), on: menu) == ["a", "c", "d", "e"])
        #expect(eventually { (try? store.apply(.toggle(groupID: "d"), to: id).revision) == 2 })
    }

    @Test func bytesASessionTakesInRedis() throws {
        let fixture = try RedisStoreFixture()
        let store = try fixture.store(MenuGeneration(try sichuanMenu()))
        let id = try store.create()
        let key = "test:s:\(id)"
        var figures: [String] = []
        func measure(_ label: String) {
            if case .integer(let bytes) = fixture.server.command("MEMORY", "USAGE", key, "SAMPLES", "0") {
                figures.append("\(label) \(bytes)")
            }
        }
        measure("new")
        for group in ["main-courses", "drinks", "beer"] { _ = try store.apply(.toggle(groupID: group), to: id) }
        measure("3 changed groups, 3 history entries")
        for step in 0 ..< 61 {
            _ = try store.apply(.toggle(groupID: step % 2 == 0 ? "breakfast" : "main-courses"), to: id)
        }
        measure("\(try store.state(of: id).changedGroupCount) changed groups, 64 history entries")
        #expect(figures.count == 3)
        print("Redis store figure: bytes per session (MEMORY USAGE): " + figures.joined(separator: ", "))
    }
}
