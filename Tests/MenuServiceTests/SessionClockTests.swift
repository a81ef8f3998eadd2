import Foundation
import Testing
@testable import MenuService

@Suite("SessionClock: the coarse clock sessions age by")
struct SessionClockTests {
    @Test func neverGoesBackwards() {
        var previous = SessionClock.now()
        for _ in 0 ..< 100_000 {
            let now = SessionClock.now()
            #expect(now >= previous)
            previous = now
        }
    }

    @Test func staysWithinAFewMillisecondsOfTheContinuousClock() {
        _ = SessionClock.now()  // the origin is taken on first use
        for _ in 0 ..< 20 {
            let gap = ContinuousClock.now - SessionClock.now()
            #expect(gap > .milliseconds(-20) && gap < .milliseconds(20), "gap \(gap)")
            usleep(2_000)
        }
    }

    @Test func advancesWithTime() {
        let before = SessionClock.now()
        usleep(50_000)
        let elapsed = SessionClock.now() - before
        #expect(elapsed >= .milliseconds(30) && elapsed < .seconds(5), "elapsed \(elapsed)")
    }
}
