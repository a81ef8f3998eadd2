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

    @Test func advancesWithTheContinuousClock() {
        let before = (SessionClock.now(), ContinuousClock.now)
        usleep(50_000)
        let sessionElapsed = SessionClock.now().milliseconds(since: before.0)
        let elapsed = Int64((ContinuousClock.now - before.1) / .milliseconds(1))
        #expect(sessionElapsed >= 30 && abs(sessionElapsed - elapsed) <= 20, "\(sessionElapsed) ms against \(elapsed) ms")
    }

    @Test(arguments: [
        (Duration.seconds(3), Int64(3000)), (.milliseconds(1500), 1500), (.microseconds(2999), 2),
        (.seconds(-5), 0), (.zero, 0), (.seconds(Int64.max), Int64.max),
    ])
    func durationsBecomeWholeMilliseconds(duration: Duration, milliseconds: Int64) {
        #expect(SessionClock.milliseconds(of: duration) == milliseconds)
    }

    @Test func timesSubtractAndAdvanceInMilliseconds() {
        let start = SessionTime(milliseconds: 1_000)
        #expect(start.advanced(byMilliseconds: 250).milliseconds(since: start) == 250)
        #expect(start.milliseconds(since: start.advanced(byMilliseconds: 40)) == -40)
        #expect(start < start.advanced(byMilliseconds: 1))
    }
}
