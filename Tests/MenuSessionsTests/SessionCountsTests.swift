import MenuModel
import MenuSessions
import MenuTestSupport
import Testing

/// The counts metrics report: sessions created, expired (by each kind of sweep) and evicted.
@Suite("Sessions: created, expired and evicted counts")
struct SessionCountsTests {
    @Test func createdExpiredAndEvictedSessionsAreCountedOnceEach() throws {
        let clock = ManualSessionClock()
        let sessions = InMemorySessionStore(
            menu: try sichuanMenu(), maxSessions: 3, timeToLive: .seconds(100),
            evictionIdle: .seconds(10), clock: clock.now)
        let first = try sessions.create()
        _ = try sessions.create()
        _ = try sessions.apply(.toggle(groupID: "drinks"), to: nil)  // a write without a session creates one
        #expect(sessions.sessionCounts.tally == SessionCounts(held: 3, created: 3, expired: 0, evicted: 0))

        clock.advance(milliseconds: 11_000)
        _ = try sessions.state(of: first)
        _ = try sessions.create()  // full: the least recently used idle one is evicted
        #expect(sessions.sessionCounts.tally == SessionCounts(held: 3, created: 4, expired: 0, evicted: 1))

        try sessions.delete(first)  // a deletion is neither expired nor evicted
        clock.advance(milliseconds: 101_000)
        #expect(sessions.sweepExpired() == 2)
        #expect(sessions.sessionCounts.tally == SessionCounts(held: 0, created: 4, expired: 2, evicted: 1))
    }

    @Test func aWriteThatSweepsExpiredSessionsCountsThem() throws {
        let clock = ManualSessionClock()
        let sessions = InMemorySessionStore(
            menu: try sichuanMenu(), maxSessions: 10, timeToLive: .seconds(5), clock: clock.now)
        for _ in 0 ..< 4 { _ = try sessions.create() }
        clock.advance(milliseconds: 6_000)
        // Each write removes a few expired sessions from its own shard's oldest end: write on
        // random shards until all four are gone (about 130 writes are expected; 10 000 bound it).
        var writes = 0
        while sessions.sessionCounts.expired < 4, writes < 10_000 {
            try sessions.delete(try sessions.create())
            writes += 1
        }
        #expect(sessions.sessionCounts.expired == 4)
        #expect(sessions.sessionCounts.held == 0)
    }

    @Test func anExpiredSessionRemovedWhenItIsNextUsedCountsAsExpired() throws {
        let clock = ManualSessionClock()
        let sessions = InMemorySessionStore(
            menu: try sichuanMenu(), maxSessions: 10, timeToLive: .seconds(5), clock: clock.now)
        let id = try sessions.create()
        clock.advance(milliseconds: 6_000)
        #expect(throws: SessionStoreError.unknownSession) { try sessions.delete(id) }
        #expect(sessions.sessionCounts.tally == SessionCounts(held: 0, created: 1, expired: 1, evicted: 0))
        #expect(throws: SessionStoreError.unknownSession) { try sessions.delete(id) }  // gone: counted once
        #expect(sessions.sessionCounts.expired == 1)
    }
}

extension SessionCounts {
    /// The four counts alone (the bytes have tests of their own: SessionMemoryTests).
    fileprivate var tally: SessionCounts {
        SessionCounts(held: held, created: created, expired: expired, evicted: evicted)
    }
}
