import Foundation
import Metrics
import ShardedCounters
import Testing

@Suite struct ThreadShardedCountersTests {
    @Test func addsFromManyThreadsAddUpExactlyPerSlot() {
        let counters = ThreadShardedCounters(slots: 3)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for _ in 0 ..< 10_000 {
                counters.withCells { cells in
                    cells.add(1, to: 0)
                    cells.add(thread, to: 2)
                }
            }
        }
        #expect(counters.totals() == [80_000, 0, 10_000 * (0 ..< 8).reduce(0, +)])
        #expect(counters.threadCount >= 1 && counters.threadCount <= 8)
    }

    @Test func aThreadThatSubtractsWhatAnotherAddedLeavesZero() {
        let counters = ThreadShardedCounters(slots: 1)
        let done = DispatchSemaphore(value: 0)
        Thread {
            for _ in 0 ..< 1000 { counters.add(1, to: 0) }
            done.signal()
        }.start()
        done.wait()
        for _ in 0 ..< 1000 { counters.add(-1, to: 0) }
        #expect(counters.totals() == [0])
    }
}

@Suite struct RequestMetricsTests {
    @Test func aRequestCountsInItsRouteItsClassItsBucketAndItsStatus() {
        let metrics = RequestMetrics(routes: ["/a", "/b"], bucketBounds: [1_000, 10_000], countedStatuses: [304, 503])
        metrics.record(route: 0, status: 200, nanoseconds: 500)  // first bucket
        metrics.record(route: 0, status: 304, nanoseconds: 1_000)  // a bound is inclusive
        metrics.record(route: 1, status: 503, nanoseconds: 20_000)  // +Inf
        metrics.record(route: 1, status: 42, nanoseconds: 5_000)  // not a status: counted as 5xx
        let snapshot = metrics.snapshot()
        #expect(
            snapshot.routes[0]
                == RequestMetrics.RouteFigures(
                    classes: [0, 1, 1, 0, 0], cumulativeBuckets: [2, 2, 2], sumNanoseconds: 1_500))
        #expect(
            snapshot.routes[1]
                == RequestMetrics.RouteFigures(
                    classes: [0, 0, 0, 0, 2], cumulativeBuckets: [0, 1, 2], sumNanoseconds: 25_000))
        #expect(snapshot.statuses == [1, 1])
    }

    @Test func countsFromConcurrentThreadsAreExactAndConsistent() {
        let metrics = RequestMetrics(routes: ["/x"], countedStatuses: [429])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for index in 0 ..< 5_000 {
                metrics.record(route: 0, status: index % 2 == 0 ? 200 : 429, nanoseconds: thread * 1_000 + index)
            }
        }
        let figures = metrics.snapshot().routes[0]
        #expect(figures.count == 20_000 && figures.classes.reduce(0, +) == 20_000)
        #expect(figures.classes[1] == 10_000 && figures.classes[3] == 10_000 && metrics.snapshot().statuses == [10_000])
        #expect(figures.cumulativeBuckets == figures.cumulativeBuckets.sorted(), "cumulative buckets never decrease")
    }
}

@Suite struct PrometheusTextTests {
    @Test func familiesSamplesAndHistogramsAreWrittenInTheTextFormat() {
        var text = PrometheusText()
        text.single("up_total", .counter, help: "Ups.", 3)
        text.family("latency_seconds", .histogram, help: "Latency.")
        text.histogramSeries(
            "latency_seconds", [("route", "/a")], bounds: [0.000001, 0.5], cumulative: [1, 2, 4], sum: 1.25)
        #expect(
            text.text == """
                # HELP up_total Ups.
                # TYPE up_total counter
                up_total 3
                # HELP latency_seconds Latency.
                # TYPE latency_seconds histogram
                latency_seconds_bucket{route="/a",le="1e-06"} 1
                latency_seconds_bucket{route="/a",le="0.5"} 2
                latency_seconds_bucket{route="/a",le="+Inf"} 4
                latency_seconds_sum{route="/a"} 1.25
                latency_seconds_count{route="/a"} 4

                """)
    }

    @Test func labelValuesAndHelpAreEscapedSoNoInputBreaksALine() {
        var text = PrometheusText()
        text.family("info", .gauge, help: "a \\ b\nc \"d\"")
        text.sample("info", [("version", "x\"y\\z\nw")], 1)
        #expect(text.text == "# HELP info a \\\\ b\\nc \"d\"\n# TYPE info gauge\ninfo{version=\"x\\\"y\\\\z\\nw\"} 1\n")
    }
}
