import Foundation
import MenuApp
import MenuAppTestSupport
import MenuServiceTestSupport
import MenuSessions
import MenuSessionsRedis
import MenuTestSupport
import Testing

extension AppTests {
    /// Eviction and refusal at a full table over a real server, and the settings that tune them.
    @Suite("Sessions: eviction and refusal over a live server, and their flags")
    struct SessionEvictionLiveTests {
        @Test func aLiveServerEvictsTheLeastRecentlyUsedSessionOrRefusesWithRetryAfter() throws {
            let evicting = try LiveServer {
                $0.maxSessions = 2
                $0.sessionEvictIdleSeconds = 0
            }
            defer { evicting.shutdown() }
            let connection = try evicting.connect()
            func create(_ connection: LiveRawConnection) throws -> LiveResponse {
                try connection.request("POST", "/sessions")
            }
            // Sessions in different shards are ordered by their times of use, which the coarse clock
            // gives to a few milliseconds: each step waits for its next tick.
            func nextTick() {
                let start = SessionClock.now()
                while SessionClock.now() == start { usleep(200) }
            }
            let first = try #require(try create(connection).header("X-Session-Id"))
            nextTick()
            let second = try #require(try create(connection).header("X-Session-Id"))
            nextTick()
            #expect(try connection.request("GET", "/count", headers: [("X-Session-Id", first)]).status == 200)
            nextTick()
            #expect(try create(connection).status == 201)  // evicts the second, the least recently used
            let gone = try connection.request("GET", "/count", headers: [("X-Session-Id", second)])
            #expect(gone.status == 404)
            #expect(try gone.json()["error"]?["code"]?.stringValue == "unknown_session")
            #expect(try connection.request("GET", "/count", headers: [("X-Session-Id", first)]).status == 200)

            let refusing = try LiveServer { $0.maxSessions = 1 }
            defer { refusing.shutdown() }
            let other = try refusing.connect()
            #expect(try create(other).status == 201)
            let refused = try create(other)
            #expect(refused.status == 429)
            #expect(refused.header("Retry-After").flatMap(Int.init).map { (3590 ... 3600).contains($0) } == true)
        }

        @Test func theFlagsReachTheSettings() throws {
            let command = try ServerSettings.parse(
                arguments: ["--session-evict-idle", "0", "--max-changed-groups=7"], environment: [:])
            guard case .run(let settings) = command else {
                Issue.record("not a run: \(command)")
                return
            }
            #expect(settings.sessionEvictIdleSeconds == 0)
            #expect(settings.maxChangedGroups == 7)
            #expect(ServerSettings().sessionEvictIdleSeconds == 3600)
            #expect(ServerSettings().maxChangedGroups == 10_000)
            #expect(throws: SettingsError.self) {
                try ServerSettings.parse(arguments: ["--max-changed-groups", "0"], environment: [:])
            }
        }

        @Test func theSessionMemoryFlagTakesSizesInPowersOf1024AndRefusesOthersNamingTheRange() throws {
            for (text, bytes) in [("256M", 256 << 20), ("1G", 1 << 30), ("1536k", 1536 << 10), ("1048576", 1 << 20)] {
                guard
                    case .run(let settings) = try ServerSettings.parse(
                        arguments: ["--session-memory", text], environment: [:])
                else {
                    Issue.record("not a run")
                    continue
                }
                #expect(settings.sessionMemory == bytes, "\(text)")
                #expect(settings.sessionLimits.sessionMemory == bytes)
                #expect(settings.redisStoreOptions.sessionMemory == bytes)
            }
            guard
                case .run(let fromEnvironment) = try ServerSettings.parse(
                    arguments: [], environment: ["MENU_SESSION_MEMORY": "64M"])
            else {
                Issue.record("not a run")
                return
            }
            #expect(fromEnvironment.sessionMemory == 64 << 20)
            #expect(ServerSettings().sessionMemory == 32 << 20)
            for bad in ["", "M", "12X", "-5M", "1.5G", "512K", "2T", "99999999999999999999G", "1 G"] {
                #expect(throws: SettingsError.self, "\(bad)") {
                    try ServerSettings.parse(arguments: ["--session-memory", bad], environment: [:])
                }
            }
            #expect(ServerSettings.usage.contains("--session-memory SIZE"))
            #expect(ServerSettings.usage.contains("(default 32M)"))
        }

        @Test func theRedisStoreTakesTheSessionBoundsItUsedToIgnore() throws {
            guard
                case .run(let settings) = try ServerSettings.parse(
                    arguments: [
                        "--store", "redis://127.0.0.1:6379", "--max-sessions", "7", "--session-evict-idle", "9"
                    ], environment: [:])
            else {
                Issue.record("not a run")
                return
            }
            #expect(settings.redisStoreOptions.maxSessions == 7)
            #expect(settings.redisStoreOptions.evictionIdle == .seconds(9))
        }
    }
}
