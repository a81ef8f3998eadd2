#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A point on the clock the session stores age sessions by: whole milliseconds since an arbitrary
/// origin. Plain integers, so stamping and checking a session on every request is a subtraction
/// and a compare (no `Duration` arithmetic, which is 128-bit and out of line).
///
/// Invariant: only compared with, or subtracted from, times of the same clock.
package struct SessionTime: Sendable, Hashable, Comparable {
    package var milliseconds: Int64

    package init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// Whole milliseconds from `earlier` to `self` (negative when `earlier` is later).
    @inlinable
    package func milliseconds(since earlier: SessionTime) -> Int64 {
        milliseconds &- earlier.milliseconds
    }

    /// This time moved by `milliseconds` (earlier when negative).
    package func advanced(byMilliseconds milliseconds: Int64) -> SessionTime {
        SessionTime(milliseconds: self.milliseconds &+ milliseconds)
    }

    package static func < (lhs: SessionTime, rhs: SessionTime) -> Bool { lhs.milliseconds < rhs.milliseconds }
}

/// The session stores' clock: the kernel's coarse monotonic clock, in milliseconds. Idle limits
/// are seconds to days, so its resolution of a few milliseconds is plenty, and a read costs
/// about 11 ns here against about 80 ns for `ContinuousClock.now`; a session is touched on every
/// request.
///
/// Invariant: never goes backwards. It runs with `CLOCK_MONOTONIC`, which (unlike
/// `ContinuousClock`) stands still while the machine is suspended, so a suspended server's
/// sessions age by the time it was awake.
package enum SessionClock {
    /// Now, to within the coarse clock's resolution.
    @Sendable package static func now() -> SessionTime {
        var time = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        #else
        clock_gettime(CLOCK_MONOTONIC, &time)
        #endif
        return SessionTime(milliseconds: Int64(time.tv_sec) &* 1000 &+ Int64(time.tv_nsec) / 1_000_000)
    }

    /// `duration` in whole milliseconds, rounded down; `Int64.max` for anything longer than that
    /// holds (an idle limit of "forever"), 0 for negative durations.
    package static func milliseconds(of duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return .max }
        let (total, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflow2 ? .max : total
    }
}
