import ShardedCounters

/// Requests counted per route and status class, a latency histogram per route, and a few
/// statuses counted on their own, all in one ``ThreadShardedCounters``: recording a request is
/// one thread-local look-up and four or five plain adds, no lock and no allocation.
///
/// Invariant: routes are a fixed list (indices `0 ..< routes.count`, label cardinality bounded by
/// the caller's table); a ``Snapshot`` has, per route, `count` = the sum of its class counts =
/// its last cumulative bucket, because one `record` adds to all three on one thread's block.
/// (A scrape racing a `record` may see its class before its bucket: totals are exact once the
/// adds it raced have returned.)
/// Cost: `record` O(buckets) compares (14 by default) plus the adds; ``snapshot()`` O(threads ×
/// routes × buckets).
package final class RequestMetrics: Sendable {
    /// The route labels, by index.
    package let routes: [String]
    /// Upper bounds of the histogram buckets, in nanoseconds, ascending; `+Inf` is implied.
    package let bucketBounds: [Int]
    /// The statuses counted each on its own, beside the classes (e.g. 304, 412, 429, 503).
    package let countedStatuses: [Int]

    /// The default buckets: 1 µs to 1 s, for handlers that take a few microseconds.
    package static let microsecondBuckets: [Int] = [
        1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
        1_000_000, 10_000_000, 100_000_000, 1_000_000_000
    ]
    /// Status classes 1xx ... 5xx; anything outside 100...599 counts as 5xx.
    package static let statusClasses = ["1xx", "2xx", "3xx", "4xx", "5xx"]

    /// Slots per route: the classes, a bucket per bound plus `+Inf`, the sum of nanoseconds.
    private let routeStride: Int
    private let counters: ThreadShardedCounters

    package init(routes: [String], bucketBounds: [Int] = RequestMetrics.microsecondBuckets, countedStatuses: [Int]) {
        precondition(!routes.isEmpty && bucketBounds == bucketBounds.sorted() && !bucketBounds.isEmpty)
        self.routes = routes
        self.bucketBounds = bucketBounds
        self.countedStatuses = countedStatuses
        routeStride = Self.statusClasses.count + bucketBounds.count + 2
        counters = ThreadShardedCounters(slots: routes.count * routeStride + countedStatuses.count)
    }

    /// Counts one request to route `route` (an index into ``routes``) answered with `status`
    /// after `nanoseconds`.
    @inline(__always)
    package func record(route: Int, status: Int, nanoseconds: Int) {
        let base = route * routeStride
        let statusClass = (100 ... 599).contains(status) ? status / 100 - 1 : 4
        var bucket = 0
        while bucket < bucketBounds.count, nanoseconds > bucketBounds[bucket] { bucket += 1 }
        let classes = Self.statusClasses.count
        let statusSlot = countedStatuses.firstIndex(of: status)
        counters.withCells { cells in
            cells.add(1, to: base + statusClass)
            cells.add(1, to: base + classes + bucket)
            cells.add(nanoseconds, to: base + classes + bucketBounds.count + 1)
            if let statusSlot { cells.add(1, to: routes.count * routeStride + statusSlot) }
        }
    }

    /// One route's figures in a ``Snapshot``.
    package struct RouteFigures: Sendable, Equatable {
        /// Requests per status class, in the order of ``RequestMetrics/statusClasses``.
        package var classes: [Int]
        /// Requests that took at most each bound (cumulative), the last one `+Inf` (= ``count``).
        package var cumulativeBuckets: [Int]
        package var sumNanoseconds: Int
        package var count: Int { cumulativeBuckets.last ?? 0 }

        package init(classes: [Int], cumulativeBuckets: [Int], sumNanoseconds: Int) {
            self.classes = classes
            self.cumulativeBuckets = cumulativeBuckets
            self.sumNanoseconds = sumNanoseconds
        }
    }

    /// Every figure at one moment.
    package struct Snapshot: Sendable {
        package var routes: [RouteFigures]
        /// Per status of ``RequestMetrics/countedStatuses``, in that order.
        package var statuses: [Int]
    }

    package func snapshot() -> Snapshot {
        let totals = counters.totals()
        let classes = Self.statusClasses.count
        let routeFigures = routes.indices.map { route in
            let base = route * routeStride
            var running = 0
            let buckets = (0 ... bucketBounds.count).map { bucket in
                running += totals[base + classes + bucket]
                return running
            }
            return RouteFigures(
                classes: Array(totals[base ..< base + classes]), cumulativeBuckets: buckets,
                sumNanoseconds: totals[base + classes + bucketBounds.count + 1])
        }
        let statusBase = routes.count * routeStride
        return Snapshot(
            routes: routeFigures, statuses: Array(totals[statusBase ..< statusBase + countedStatuses.count]))
    }
}
