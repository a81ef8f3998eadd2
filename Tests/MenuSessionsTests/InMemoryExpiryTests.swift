import MenuModel
import MenuTestSupport
import Synchronization
import Testing

@testable import MenuSessions

@Suite("In-memory store: sessions expire after their idle time")
struct InMemoryExpiryTests {
    private func store(_ clock: ManualSessionClock, maxSessions: Int = 100) throws -> InMemorySessionStore {
        InMemorySessionStore(
            menu: try sichuanMenu(), maxSessions: maxSessions, timeToLive: .seconds(60), clock: clock.now)
    }

    @Test func aSessionIdleJustUnderItsTimeToLiveIsStillThere() throws {
        let clock = ManualSessionClock()
        let sessions = try store(clock)
        let id = try sessions.create()
        clock.advance(milliseconds: 59_999)
        #expect(throws: Never.self) { try sessions.state(of: id) }
    }

    @Test func aSessionIdleForItsTimeToLiveIsUnknownToReadsAndWrites() throws {
        let clock = ManualSessionClock()
        let sessions = try store(clock)
        let id = try sessions.create()
        clock.advance(milliseconds: 60_000)
        #expect(throws: SessionStoreError.unknownSession) { try sessions.state(of: id) }
        #expect(throws: SessionStoreError.unknownSession) { try sessions.apply(.toggle(groupID: "mains"), to: id) }
    }

    @Test func aRefusedWriteToAnExpiredSessionRemovesItAndFreesItsSlot() throws {
        let clock = ManualSessionClock()
        let sessions = try store(clock, maxSessions: 1)
        let id = try sessions.create()
        clock.advance(milliseconds: 60_000)
        #expect(throws: SessionStoreError.unknownSession) {
            try sessions.apply(.toggle(groupID: "main-courses"), to: id)
        }
        #expect(sessions.count == 0)  // the write's sweep of its shard's oldest end took it
        #expect(sessions.sweepExpired() == 0)
        #expect(throws: Never.self) { try sessions.create() }  // its slot is free again
    }

    @Test func everyUseRestartsTheIdleTime() throws {
        let clock = ManualSessionClock()
        let sessions = try store(clock)
        let id = try sessions.create()
        for _ in 0 ..< 5 {
            clock.advance(milliseconds: 45_000)
            _ = try sessions.state(of: id)
        }
        clock.advance(milliseconds: 45_000)
        #expect(throws: Never.self) { try sessions.state(of: id) }
    }

    @Test func sweepingDropsOnlyExpiredSessionsAndFreesTheirPlaces() throws {
        let clock = ManualSessionClock()
        let sessions = try store(clock, maxSessions: 3)
        let old = try sessions.create()
        _ = try sessions.create()
        clock.advance(milliseconds: 30_000)
        let young = try sessions.create()
        clock.advance(milliseconds: 30_000)  // the first two are 60 s idle, the third 30 s
        #expect(sessions.sweepExpired() == 2)
        #expect(sessions.count == 1)
        #expect(throws: SessionStoreError.unknownSession) { try sessions.state(of: old) }
        #expect(throws: Never.self) { try sessions.state(of: young) }
    }

    @Test func aFullStoreMakesRoomByDroppingExpiredSessions() throws {
        let clock = ManualSessionClock()
        let sessions = try store(clock, maxSessions: 2)
        _ = try sessions.create()
        _ = try sessions.create()
        #expect(throws: SessionStoreError.tooManySessions(limit: 2, retryAfterSeconds: 60)) { try sessions.create() }
        clock.advance(milliseconds: 60_000)
        #expect(throws: Never.self) { try sessions.create() }
        #expect(sessions.count == 1)
    }
}
