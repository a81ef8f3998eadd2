import MenuSessions
import Synchronization

/// A session clock moved by hand.
package final class ManualSessionClock: Sendable {
    private let milliseconds = Atomic<Int64>(1_000_000)
    package init() {}
    package func advance(milliseconds delta: Int64) { milliseconds.add(delta, ordering: .relaxed) }
    package var now: @Sendable () -> SessionTime {
        { [self] in SessionTime(milliseconds: milliseconds.load(ordering: .relaxed)) }
    }
}
