import MenuModel
import MenuTestSupport
import Testing

@testable import MenuSessions

/// The sessions' bytes are counted as they change, held under `--session-memory` by evicting the
/// least recently used idle sessions, and one session is capped at a 64th of it.
@Suite("Sessions: the byte budget, its evictions and refusals, the per-session cap")
struct SessionMemoryTests {
    private typealias Table = SessionTable<InMemorySessionStore.Entry>

    private func store(
        _ clock: ManualSessionClock, menu: Menu, sessionMemory: Int,
        evictionIdle: Duration = .seconds(60),
        maxChangedGroups: Int = SessionLimits.defaults.maxChangedGroups
    ) -> InMemorySessionStore {
        InMemorySessionStore(
            menu: menu, timeToLive: .seconds(86_400), evictionIdle: evictionIdle,
            maxChangedGroups: maxChangedGroups, sessionMemory: sessionMemory, clock: clock.now)
    }

    /// The running total against a count of every shard's sessions, which must agree.
    private func recounted(_ table: Table) -> Int {
        (0 ..< Table.shardCount).reduce(0) { total, index in total + table.withShard(at: index) { $0.bytes } }
    }

    @Test func theBytesFollowEveryCreateWriteReadAndDeleteAndReturnToZero() throws {
        let menu = try wideMenu(groups: 2_000)
        let sessions = store(ManualSessionClock(), menu: menu, sessionMemory: 1 << 30)
        #expect(sessions.table.bytes == 0)
        let big = try sessions.create(in: sessions.currentMenu, state: expandedState(0 ..< 1_000, in: menu))
        let small = try sessions.create()
        let afterCreates = sessions.table.bytes
        #expect(afterCreates >= 1_000 * (4 + 12))  // a flip and an overlay entry per expanded group, at least
        #expect(afterCreates == recounted(sessions.table))
        for group in 1_000 ..< 1_200 { _ = try sessions.apply(.toggle(groupID: "g\(group)"), to: small) }
        #expect(sessions.table.bytes > afterCreates)
        #expect(sessions.table.bytes == recounted(sessions.table))
        _ = try sessions.apply(.setAll(.default), to: big)
        _ = try sessions.snapshot(of: big)
        #expect(sessions.table.bytes == recounted(sessions.table))
        try sessions.delete(big)
        try sessions.delete(small)
        #expect(sessions.table.bytes == 0)
        #expect(sessions.sessionCounts.bytes == 0)
        #expect(sessions.sessionCounts.memoryBudget == 1 << 30)
    }

    @Test func theSessionsHoldTheBudgetLessASixteenthForTheAllocatorsSlackAndNoBudgetStaysNone() {
        #expect(SessionLimits.heldBytes(ofBudget: 32 << 20) == 30 << 20)
        #expect(SessionLimits.heldBytes(ofBudget: .max) == .max)
        let table = SessionTable<InMemorySessionStore.Entry>(
            maxSessions: 10, timeToLive: 60_000, evictionIdle: 60_000, memoryBudget: 16 << 20)
        #expect(table.memoryBudget == 16 << 20)
        #expect(table.heldBytesLimit == 15 << 20)
    }

    @Test func aNewSessionPastTheBudgetEvictsTheLeastRecentlyUsedIdleSessionsFirst() throws {
        let menu = try wideMenu(groups: 4_000)
        let clock = ManualSessionClock()
        let state = expandedState(0 ..< 1_000, in: menu)
        let one = SessionShard<InMemorySessionStore.Entry>.footprint(
            of: .init(
                state: state.compacted, epoch: MenuGeneration(menu).epoch, history: ChangeHistory(revision: 0),
                lastUsed: clock.now()))
        // The sessions hold all of the budget but a 16th (the allocator's slack): 200 such sessions fit, not 201.
        let budget = (200 * one + one / 2) * 16 / 15
        #expect(SessionLimits.heldBytes(ofBudget: budget) / one == 200)
        let sessions = store(clock, menu: menu, sessionMemory: budget)
        var ids: [SessionID] = []
        for _ in 0 ..< 200 {
            ids.append(try sessions.create(in: sessions.currentMenu, state: state))
            clock.advance(milliseconds: 1_000)
        }
        #expect(sessions.table.bytes <= sessions.table.heldBytesLimit)
        clock.advance(milliseconds: 61_000)
        _ = try sessions.snapshot(of: ids[0])  // used again: the second is now the least recently used
        let newest = try sessions.create(in: sessions.currentMenu, state: state)
        #expect(throws: SessionStoreError.unknownSession) { try sessions.snapshot(of: ids[1]) }
        for id in [ids[0], ids[2], newest] { #expect(throws: Never.self) { try sessions.snapshot(of: id) } }
        #expect(sessions.count == 200)
        #expect(sessions.sessionCounts.evicted == 1)
        #expect(sessions.table.bytes <= sessions.table.heldBytesLimit)
    }

    @Test func atTheBudgetWithNoIdleSessionANewSessionAndAGrowingWriteAreRefusedWithTheWait() throws {
        let menu = try wideMenu(groups: 4_000)
        let clock = ManualSessionClock()
        let state = expandedState(0 ..< 1_000, in: menu)
        let sessions = store(clock, menu: menu, sessionMemory: 4 << 20)
        var ids: [SessionID] = []
        for _ in 0 ..< 400 {  // 4 MiB hold fewer than 300 of them
            do { ids.append(try sessions.create(in: sessions.currentMenu, state: state)) } catch { break }
            clock.advance(milliseconds: 100)
        }
        try #require(ids.count > 100)
        #expect(sessions.table.bytes <= sessions.table.heldBytesLimit)
        clock.advance(milliseconds: 10_000)  // the oldest has been idle 10 s + 100 ms for each session after it, of the 60 s
        let wait = Int((60_000 - 10_000 - 100 * Int64(ids.count) + 999) / 1000)
        let full = SessionStoreError.sessionMemoryFull(budget: 4 << 20, retryAfterSeconds: wait)
        #expect(throws: full) { try sessions.create(in: sessions.currentMenu, state: state) }
        // Writes that may grow a session go on while the bytes fit, then are refused the same way;
        // a reset of the whole tree, which cannot grow one, is not.
        let last = ids[ids.count - 1]
        var refusal: SessionStoreError?
        for group in 2_000 ..< 4_000 where refusal == nil {
            do { _ = try sessions.apply(.toggle(groupID: "g\(group)"), to: last) } catch { refusal = error }
        }
        #expect(refusal == full)
        // Past it by one toggle's growth at most (an array doubling its capacity: a session's cap at most).
        #expect(
            sessions.table.bytes <= sessions.table.heldBytesLimit
                + SessionLimits(
                    maxSessions: 1, timeToLive: .seconds(1), evictionIdle: .seconds(1), maxChangedGroups: 1,
                    sessionMemory: 4 << 20
                ).maxSessionBytes)
        #expect(throws: Never.self) { try sessions.apply(.setAll(.default), to: last) }
        #expect(sessions.count == ids.count)
        #expect(sessions.sessionCounts.evicted == 0)
    }

    @Test func aWriteThatWouldTakeASessionPastItsCapIsRefusedAndLeavesNoTrace() throws {
        let menu = try wideMenu(groups: 40_000)
        // A session may hold 256 KiB; the count limit is set past it, so the bytes are what refuse.
        let sessions = store(ManualSessionClock(), menu: menu, sessionMemory: 16 << 20, maxChangedGroups: 100_000)
        let cap = SessionLimits(
            maxSessions: 10, timeToLive: .seconds(60), evictionIdle: .seconds(60), maxChangedGroups: 100_000,
            sessionMemory: 16 << 20
        ).maxStateBytes
        #expect(sessions.maxStateBytes == cap)
        let id = try sessions.create()
        var refused: SessionStoreError?
        var group = 0
        var before = try sessions.state(of: id)
        while refused == nil, group < 40_000 {
            before = try sessions.state(of: id)
            do { _ = try sessions.apply(.toggle(groupID: "g\(group)"), to: id) } catch { refused = error }
            group += 1
        }
        #expect(refused == .sessionTooLarge(limit: cap))
        let after = try sessions.state(of: id)
        #expect(after == before)  // the refused toggle left no trace
        #expect(after.heapBytes <= cap)
        #expect(after.changedGroupCount > 1_000)
        _ = try sessions.apply(.toggle(groupID: "g0"), to: id)  // back to the default: allowed
        _ = try sessions.apply(.setAll(.expanded), to: id)  // a reset: allowed
    }

    @Test func aNewSessionWhoseStateIsOverTheCapIsRefusedAndNotCreated() throws {
        let menu = try wideMenu(groups: 40_000)
        let sessions = store(ManualSessionClock(), menu: menu, sessionMemory: 4 << 20)  // a session may hold 64 KiB
        let state = expandedState(0 ..< 5_000, in: menu)
        #expect(throws: SessionStoreError.sessionTooLarge(limit: sessions.maxStateBytes)) {
            try sessions.create(in: sessions.currentMenu, state: state)
        }
        #expect(sessions.count == 0)
        #expect(sessions.table.bytes == 0)
    }

    @Test func theCapIsA64thOfTheBudgetAndAt16MiBAtMost() {
        #expect(
            SessionLimits(
                maxSessions: 1, timeToLive: .seconds(1), evictionIdle: .seconds(1), maxChangedGroups: 1,
                sessionMemory: 64 << 20
            ).maxSessionBytes == 1 << 20)
        #expect(
            SessionLimits(
                maxSessions: 1, timeToLive: .seconds(1), evictionIdle: .seconds(1), maxChangedGroups: 1,
                sessionMemory: 1 << 40
            ).maxSessionBytes == 16 << 20)
        #expect(SessionLimits.defaults.maxStateBytes > 0)
        #expect(SessionLimits.defaults.maxStateBytes < SessionLimits.defaults.maxSessionBytes)
    }
    @Test func aReloadMarkIsCountedAndFreedAtTheNextWriteOnceItCanNoLongerBeAnswered() throws {
        let menu = try wideMenu(groups: 2_000)
        let sessions = store(ManualSessionClock(), menu: menu, sessionMemory: 1 << 30)
        let id = try sessions.create(in: sessions.currentMenu, state: expandedState(0 ..< 1_000, in: menu))
        let before = sessions.table.bytes
        // A reload keeping the previous menu: the session keeps its state on it for its entry.
        let next = sessions.currentMenu.succeeded(by: try wideMenu(groups: 2_001), keepingPrevious: true)
        sessions.adopt(next)
        let carried = sessions.table.bytes
        #expect(carried > before + 1_000 * 4, "the mark's state is counted")
        #expect(carried == recounted(sessions.table))
        // While the entry can be answered a write keeps it.
        _ = try sessions.apply(.toggle(groupID: "g1999"), to: id, in: next)
        #expect(try sessions.changes(of: id, since: 0, in: next).entries?.count == 2)
        // Once the window ran out it goes at the next write.
        next.epoch.forgetPreviousMenu()
        _ = try sessions.apply(.toggle(groupID: "g1999"), to: id, in: next)
        #expect(sessions.table.bytes < carried - 1_000 * 4)
        #expect(sessions.table.bytes == recounted(sessions.table))
        #expect(try sessions.changes(of: id, since: 0, in: next).entries == nil)
        #expect(try sessions.changes(of: id, since: 2, in: next).entries?.count == 1)
    }
}
