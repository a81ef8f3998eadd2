import Foundation
import Testing

@testable import MenuSessions

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

    /// `CLOCK_MONOTONIC` in whole milliseconds: the fine clock the coarse one is a sampling of.
    static func monotonicMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// How far the coarse clock may trail the fine one: its resolution (one kernel tick, 4 ms
    /// here), with room for a tick the kernel handles late. Independent of how busy the machine
    /// is: both clocks are read back to back, nothing is timed.
    static let coarseLag: Int64 = 100

    /// Each reading lies between a fine reading taken just before and one just after it (less the
    /// coarse clock's lag): the session clock is the monotonic clock in milliseconds, whatever
    /// the load. Checked at two points at least 200 ms apart, so it also advances with it.
    @Test func readsTheMonotonicClockInMilliseconds() {
        var readings: [Int64] = []
        for round in 0 ..< 2 {
            if round == 1 {
                let start = Self.monotonicMilliseconds()
                while Self.monotonicMilliseconds() - start < 200 { usleep(10_000) }
            }
            let before = Self.monotonicMilliseconds()
            let session = SessionClock.now().milliseconds
            let after = Self.monotonicMilliseconds()
            #expect(
                session <= after && session >= before - Self.coarseLag,
                "session clock \(session) ms outside the monotonic clock's [\(before), \(after)] ms")
            readings.append(session)
        }
        #expect(readings[1] - readings[0] >= 200 - Self.coarseLag, "\(readings)")
    }

    @Test(arguments: [
        (Duration.seconds(3), Int64(3000)), (.milliseconds(1500), 1500), (.microseconds(2999), 2),
        (.seconds(-5), 0), (.zero, 0), (.seconds(Int64.max), Int64.max)
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
