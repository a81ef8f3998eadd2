// Waiting for a condition instead of sleeping and hoping: tests on a shared, loaded machine never
// assume that something happens within a fixed time, only that it happens before a generous
// bound on the wait (which a correct program never comes near).

import Foundation

/// The longest a test waits for something that must happen: far beyond what a correct server
/// needs even under AddressSanitizer on a busy machine, so reaching it means the thing never
/// happened.
package let eventuallyBound: Duration = .seconds(30)

/// Polls `condition` every `interval` until it is true (returns true) or `bound` has passed since
/// the call (returns false, after one last look). Blocks the calling thread; costs one call of
/// `condition` per interval.
package func eventually(
    within bound: Duration = eventuallyBound, every interval: Duration = .milliseconds(5),
    _ condition: () throws -> Bool
) rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: bound)
    while clock.now < deadline {
        if try condition() { return true }
        Thread.sleep(
            forTimeInterval: Double(interval.components.attoseconds) / 1e18 + Double(interval.components.seconds))
    }
    return try condition()
}
