import DurableTestSupport
import MenuModel
import Testing

@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

/// The durable store evicts as the in-memory one does, journals each eviction as a deletion, and
/// rebuilds the least-recently-used order from the files.
@Suite("Durable store: eviction and the changed-groups cap survive restarts")
struct DurableEvictionTests {
    private func open(
        _ directory: DurableTemporaryDirectory, _ clock: DurableTestClock, maxSessions: Int = 2,
        maxChangedGroups: Int = 10_000
    ) throws -> DurableSessionStore {
        try DurableSessionStore(
            directory: directory.path, menu: DurableFixtures.menu(), fsync: .no, maxSessions: maxSessions,
            timeToLive: .seconds(3600), evictionIdle: .seconds(60), maxChangedGroups: maxChangedGroups,
            clock: clock.clock, wallClock: clock.wall)
    }

    @Test func anEvictedSessionStaysGoneAfterARestart() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let clock = DurableTestClock()
        let first = try open(directory, clock)
        let evicted = try first.create()
        let kept = try first.create()
        clock.advance(.seconds(61))
        _ = try first.state(of: kept)
        let added = try first.create()
        #expect(durableError { try first.state(of: evicted) } == .unknownSession)
        first.close()

        let second = try open(directory, clock)
        defer { second.close() }
        #expect(second.count == 2)
        #expect(durableError { try second.state(of: evicted) } == .unknownSession)
        for id in [kept, added] { #expect(durableError { try second.state(of: id) } == nil) }
    }

    @Test func aRestartedStoreEvictsTheSessionLeastRecentlyUsedByItsFiles() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let clock = DurableTestClock()
        let first = try open(directory, clock)
        let recent = try first.create()
        let idle = try first.create()
        clock.advance(.seconds(61))
        _ = try first.apply(.toggle(groupID: "b"), to: recent)  // journaled with its time
        first.close()

        clock.advance(.seconds(61))
        let second = try open(directory, clock)
        defer { second.close() }
        _ = try second.create()
        #expect(durableError { try second.state(of: idle) } == .unknownSession)
        #expect(durableError { try second.state(of: recent) } == nil)
    }

    @Test func theChangedGroupsCapRefusesWithoutJournalingTheChange() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let clock = DurableTestClock()
        let first = try open(directory, clock, maxChangedGroups: 1)
        let id = try first.create()
        _ = try first.apply(.toggle(groupID: "b"), to: id)
        let capped = try first.state(of: id)
        #expect(durableError { try first.apply(.toggle(groupID: "c"), to: id) } == .tooManyChanges(limit: 1))
        #expect(try first.state(of: id) == capped)
        first.close()

        let second = try open(directory, clock, maxChangedGroups: 1)
        defer { second.close() }
        #expect(try second.state(of: id) == capped)
    }

    @Test func anExpiredSessionRemovedByAWriteCountsAsExpiredOnce() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let clock = DurableTestClock()
        let store = try open(directory, clock, maxSessions: 10)
        defer { store.close() }
        let id = try store.create()
        clock.advance(.seconds(3601))
        #expect(durableError { _ = try store.apply(.toggle(groupID: "a"), to: id) } == .unknownSession)
        #expect(store.sessionCounts.expired == 1 && store.sessionCounts.held == 0)
        #expect(durableError { _ = try store.apply(.toggle(groupID: "a"), to: id) } == .unknownSession)
        #expect(store.sessionCounts.expired == 1)
    }
}
