import Synchronization

/// How many filtered views (search cache misses) the server builds at once, across menus: a miss
/// on the 1.1M-node menu costs up to about 30 ms of CPU, and any client can send distinct queries
/// in a loop, so past ``limit`` builds a miss is refused (`503 busy` with `Retry-After`) instead
/// of taking another HTTP thread and core. Cached views, every other route and `/healthz` are
/// never refused, so a flood of uncached queries cannot starve them.
///
/// Invariant: `running` is the number of ``run(_:)`` bodies executing, 0 ... `limit`. Cost: one
/// compare-and-exchange loop to take a slot and one atomic add to give it back; no lock, no wait.
package final class SearchBuildSlots: Sendable {
    /// The most builds at once (`--search-builds`).
    package let limit: Int
    private let running = Atomic<Int>(0)
    private let refusals = Atomic<Int>(0)

    package init(limit: Int) {
        precondition(limit >= 1, "at least one search build must be allowed")
        self.limit = limit
    }

    /// `body`'s result, run while holding a slot; nil (and `body` not run) when all `limit` slots
    /// are taken.
    package func run<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result? {
        var taken = running.load(ordering: .relaxed)
        while true {
            guard taken < limit else {
                refusals.add(1, ordering: .relaxed)
                return nil
            }
            let (exchanged, original) = running.compareExchange(
                expected: taken, desired: taken + 1, ordering: .acquiring)
            if exchanged { break }
            taken = original
        }
        defer { running.subtract(1, ordering: .releasing) }
        return try body()
    }

    /// Builds running now (tests, metrics).
    package var inUse: Int { running.load(ordering: .relaxed) }
    /// Misses refused since start (`menu_search_refused_total`).
    package var refused: Int { refusals.load(ordering: .relaxed) }
}
