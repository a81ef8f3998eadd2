import Foundation
import MenuModel
import MenuSessions
import MenuTestSupport
import RedisClient
import RedisTestSupport
import Testing

@testable import MenuSessionsRedis

/// The byte bound in Redis itself: instances sharing a prefix hold at most `--session-memory` of
/// sessions between them (each counted as its state, its history and a fixed overhead), checked
/// atomically with each create and each write that grows a session; at the bound the least
/// recently used idle sessions go first, else the write is refused with the wait; the prefix's
/// bytes follow every write, deletion and expiry, and are what every instance reports.
@Suite("Redis store: session bytes bounded across instances", .serialized)
struct RedisStoreByteBoundTests {
    private static let budget = 1 << 20

    /// The bytes the write script counts for `id`: its state and history as Redis holds them, plus
    /// the overhead. Read from the session's key, not from the script's own bookkeeping.
    private func countedBytes(_ fixture: RedisStoreFixture, _ id: String) -> Int {
        guard case .array(let fields) = fixture.server.command("HMGET", "test:s:" + id, "s", "h") else { return 0 }
        let lengths = fields.map { field -> Int in if case .bulk(let bytes) = field { bytes.count } else { 0 } }
        return lengths.reduce(0, +) + RedisSessionStore.sessionOverheadBytes
    }

    /// The ids of the prefix's live sessions, from their keys.
    private func liveIDs(_ fixture: RedisStoreFixture) -> [String] {
        guard case .array(let keys) = fixture.server.command("KEYS", "test:s:*") else { return [] }
        return keys.compactMap { key in
            if case .bulk(let bytes) = key {
                String(decoding: bytes.dropFirst("test:s:".utf8.count), as: UTF8.self)
            } else {
                nil
            }
        }
    }

    @Test func twoInstancesHoldAtMostTheBudgetBetweenThemEvictingTheLeastRecentlyUsedIdleSessions() throws {
        let fixture = try RedisStoreFixture()
        let menu = try wideMenu(groups: 4_000)
        let state = expandedState(0 ..< 100, in: menu)
        let one = try fixture.store(
            MenuGeneration(menu), maxChangedGroups: 2_000, evictionIdle: .zero, sessionMemory: Self.budget)
        let two = try fixture.store(
            MenuGeneration(menu), maxChangedGroups: 2_000, evictionIdle: .zero, sessionMemory: Self.budget)
        var created: [SessionID] = []
        for index in 0 ..< 1_500 {
            let store = index % 2 == 0 ? one : two
            created.append(try store.create(in: store.currentMenu, state: state))
            let bytes = try #require(one.sessionCounts.storeBytes)
            #expect(bytes <= Self.budget, "after \(index + 1) creates the prefix holds \(bytes) bytes")
        }
        let live = liveIDs(fixture)
        let each = countedBytes(fixture, live[0])
        #expect(each > 400 + RedisSessionStore.sessionOverheadBytes)  // the state lists 100 groups
        #expect(live.count == Self.budget / each, "as many sessions as fit, and no more")
        let counts = two.sessionCounts
        #expect(counts.storeBytes == live.map { countedBytes(fixture, $0) }.reduce(0, +))
        #expect(counts.held == live.count && counts.created == 1_500 && counts.evicted == 1_500 - live.count)
        // The oldest went first, on both instances: the sessions kept are the newest (Redis orders
        // sessions created in one millisecond by id, so a few older ones may stand for newer ones).
        let oldest = Set(created.prefix(created.count - live.count - 20).map(\.text))
        #expect(live.filter(oldest.contains).isEmpty, "an old session outlived newer ones")
        for store in [one, two] {
            #expect(throws: SessionStoreError.unknownSession) { try store.snapshot(of: created[0]) }
        }
    }

    @Test func atTheBudgetWithNoIdleSessionACreateAndAGrowingWriteAreRefusedWithTheWait() throws {
        let fixture = try RedisStoreFixture()
        let menu = try wideMenu(groups: 4_000)
        let state = expandedState(0 ..< 100, in: menu)
        let one = try fixture.store(
            MenuGeneration(menu), maxChangedGroups: 2_000, evictionIdle: .seconds(3600), sessionMemory: Self.budget)
        let two = try fixture.store(
            MenuGeneration(menu), maxChangedGroups: 2_000, evictionIdle: .seconds(3600), sessionMemory: Self.budget)
        var ids: [SessionID] = []
        var refusal: SessionStoreError?
        let started = ContinuousClock.now
        while refusal == nil, ids.count < 2_000 {
            let store = ids.count % 2 == 0 ? one : two
            do { ids.append(try store.create(in: store.currentMenu, state: state)) } catch { refusal = error }
        }
        guard case .sessionMemoryFull(let budget, let retry)? = refusal else {
            Issue.record("expected session_memory_full, got \(String(describing: refusal))")
            return
        }
        #expect(budget == Self.budget)
        // Until the oldest session has been idle an hour: short of 3600 by the time creating took.
        let creating = Int((ContinuousClock.now - started).components.seconds) + 2
        #expect((3600 - creating ... 3600).contains(retry), "wait \(retry) after \(creating) s of creating")
        #expect(ids.count > 100)
        let full = try #require(two.sessionCounts.storeBytes)
        // A write that grows a session is refused the same way and changes nothing...
        let last = ids[ids.count - 1]
        var growing: SessionStoreError?
        for group in 2_000 ..< 3_000 where growing == nil {
            do { _ = try one.apply(.toggle(groupID: "g\(group)"), to: last) } catch { growing = error }
        }
        if case .sessionMemoryFull(Self.budget, _)? = growing {
        } else {
            Issue.record("a growing write at the budget answered \(String(describing: growing))")
        }
        #expect(try #require(two.sessionCounts.storeBytes) <= Self.budget)
        // ...while one that shrinks it goes through and gives its bytes back.
        let before = try #require(two.sessionCounts.storeBytes)
        _ = try one.apply(.setAll(.default), to: ids[0])  // every group back to the default
        #expect(try #require(two.sessionCounts.storeBytes) < before)
        #expect(before >= full)
        #expect(two.sessionCounts.evicted == 0)
        #expect(two.sessionCounts.held == ids.count)
    }

    @Test func thePrefixsBytesFollowWritesDeletionsAndExpiryBackToZero() throws {
        let fixture = try RedisStoreFixture()
        let menu = try wideMenu(groups: 400)
        let one = try fixture.store(MenuGeneration(menu), ttl: .milliseconds(300), sessionMemory: Self.budget)
        let two = try fixture.store(MenuGeneration(menu), ttl: .milliseconds(300), sessionMemory: Self.budget)
        let first = try one.create()
        let second = try two.create(in: two.currentMenu, state: expandedState(0 ..< 100, in: menu))
        for group in 200 ..< 220 { _ = try two.apply(.toggle(groupID: "g\(group)"), to: first) }
        #expect(one.sessionCounts.storeBytes == countedBytes(fixture, first.text) + countedBytes(fixture, second.text))
        try one.delete(second)
        #expect(two.sessionCounts.storeBytes == countedBytes(fixture, first.text))
        usleep(400_000)  // `first` expires in Redis; its bytes go at the next create's look at the index
        let third = try two.create()
        #expect(one.sessionCounts.storeBytes == countedBytes(fixture, third.text))
        #expect(one.sessionCounts.expired == 1)
        try two.delete(third)
        #expect(one.sessionCounts.storeBytes == 0)
        #expect(fixture.server.command("HLEN", "test:sizes") == .integer(0))
    }

    /// What a session takes in Redis's own memory against what the script counts for it: the
    /// counted overhead is at least what Redis spends beside the state and history.
    @Test func theCountedOverheadCoversWhatRedisSpendsOnASession() throws {
        let fixture = try RedisStoreFixture()
        let menu = try wideMenu(groups: 400)
        let store = try fixture.store(MenuGeneration(menu), cache: false, sessionMemory: 256 << 20)
        func usedMemory() -> Int {
            guard case .bulk(let text) = fixture.server.command("INFO", "memory") else { return 0 }
            let line = String(decoding: text, as: UTF8.self).split(whereSeparator: \.isNewline)
                .first { $0.hasPrefix("used_memory:") }
            return line.flatMap { Int($0.dropFirst("used_memory:".count)) } ?? 0
        }
        _ = try store.create()  // the index, counts and sizes exist from here on
        let before = usedMemory()
        let sessions = 10_000
        for _ in 0 ..< sessions { _ = try store.create() }
        let perSession = Double(usedMemory() - before) / Double(sessions)
        let counted = try #require(store.sessionCounts.storeBytes) / (sessions + 1)
        print("Redis used_memory per session: \(perSession) bytes; counted: \(counted)")
        #expect(Double(counted) >= perSession)
        #expect(Double(counted) <= perSession * 1.5)
    }
}
