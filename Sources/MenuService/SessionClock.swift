#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The clock the session stores stamp and check idle sessions with: `ContinuousClock` instants,
/// on Linux read from the kernel's coarse monotonic clock. Idle limits are seconds to days, so a
/// resolution of a few milliseconds is plenty, and a read costs about 11 ns here against about
/// 80 ns for `ContinuousClock.now` (a session is touched on every request).
///
/// Invariant: never goes backwards; it runs with `CLOCK_MONOTONIC`, which (unlike
/// `ContinuousClock`) stands still while the machine is suspended, so a suspended server's
/// sessions age by the time it was awake.
public enum SessionClock {
    /// Now, to within the coarse clock's resolution.
    @Sendable public static func now() -> ContinuousClock.Instant {
        #if os(Linux)
        origin.instant + (coarseMonotonic() - origin.coarse)
        #else
        ContinuousClock.now
        #endif
    }

    #if os(Linux)
    private struct Origin: Sendable {
        let instant: ContinuousClock.Instant
        let coarse: Duration
    }

    /// One reading of both clocks, taken on first use: later instants are it plus the coarse
    /// clock's progress since.
    private static let origin = Origin(instant: .now, coarse: coarseMonotonic())

    private static func coarseMonotonic() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return Duration(secondsComponent: Int64(time.tv_sec), attosecondsComponent: Int64(time.tv_nsec) * 1_000_000_000)
    }
    #endif
}
