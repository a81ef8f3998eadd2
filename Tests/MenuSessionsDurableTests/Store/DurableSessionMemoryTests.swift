import DurableTestSupport
import Foundation
import MenuModel
import MenuSessions
import MenuTestSupport
import Testing

@testable import MenuSessionsDurable

/// The durable store holds the byte budget as the memory store does, journals each eviction it
/// makes for it (a restart does not bring the session back), and refuses a state over the cap.
@Suite("Durable store: the session byte budget")
struct DurableSessionMemoryTests {
    @Test func anEvictionForTheBudgetIsJournaledAndAStateOverTheCapIsRefused() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let menu = try wideMenu(groups: 4_000)
        let clock = ManualSessionClock()
        let state = expandedState(0 ..< 1_000, in: menu)
        var evicted: SessionID?
        var kept: [SessionID] = []
        do {
            let store = try DurableSessionStore(
                directory: directory.path, menu: menu, fsync: .always, evictionIdle: .seconds(60),
                sessionMemory: 4 << 20, clock: clock.now)
            defer { store.close() }
            #expect(throws: SessionStoreError.sessionTooLarge(limit: store.maxStateBytes)) {
                try store.create(in: store.currentMenu, state: expandedState(0 ..< 4_000, in: menu))
            }
            var ids: [SessionID] = []
            for _ in 0 ..< 400 {
                do { ids.append(try store.create(in: store.currentMenu, state: state)) } catch { break }
                clock.advance(milliseconds: 100)
            }
            try #require(ids.count > 100 && ids.count < 400)
            #expect(store.table.bytes <= store.table.memoryBudget)
            clock.advance(milliseconds: 61_000)
            kept = [try store.create(in: store.currentMenu, state: state)]
            evicted = ids[0]
            #expect(throws: SessionStoreError.unknownSession) { try store.snapshot(of: ids[0]) }
            kept.append(ids[ids.count - 1])
            #expect(store.sessionCounts.evicted >= 1)
        }
        let reopened = try DurableSessionStore(
            directory: directory.path, menu: menu, evictionIdle: .seconds(60), sessionMemory: 4 << 20,
            clock: clock.now)
        defer { reopened.close() }
        #expect(throws: SessionStoreError.unknownSession) { try reopened.snapshot(of: try #require(evicted)) }
        for id in kept { #expect(try reopened.snapshot(of: id).state == state.compacted) }
    }
}
