import Glibc

/// Hands `value` to a call the optimizer cannot see into (a "black hole"): work whose result
/// reaches it cannot be deleted, and what comes back cannot be assumed, so nothing is hoisted.
@inline(never) @_optimize(none)
func blackHole<T>(_ value: T) -> T { value }

/// How long to measure: `rounds` rounds of about `roundSeconds` each.
struct TimingPlan {
    var rounds: Int
    var roundSeconds: Double

    /// Median nanoseconds per operation of `body(i)` for i = 0, 1, 2, … (each call doing
    /// `opsPerCall` operations). The iteration count doubles until a batch lasts a tenth of a
    /// round, then is scaled to fill one; each round runs that many calls. Every result goes
    /// through ``blackHole(_:)``, and so does `body`, so no call can be skipped or merged.
    /// Time is this thread's CPU time: on a shared machine, time given to other processes is not
    /// counted (their effect on the caches still is).
    func nanosecondsPerOp(opsPerCall: Int = 1, _ body: @escaping (Int) -> Int) -> Double {
        let call = blackHole(body)
        var checksum = 0
        var iteration = 0
        func batch(_ count: Int) -> Double {
            let start = Self.threadCPUSeconds()
            for _ in 0 ..< count {
                checksum &+= call(iteration)
                iteration &+= 1
            }
            return Self.threadCPUSeconds() - start
        }
        var count = 1
        var elapsed = batch(count)
        while elapsed < roundSeconds / 10 {
            count *= 2
            elapsed = batch(count)
        }
        let perRound = max(1, Int(Double(count) * roundSeconds / elapsed))
        let perOp = (0 ..< rounds).map { _ in batch(perRound) * 1e9 / Double(perRound * opsPerCall) }
        _ = blackHole(checksum)
        return median(perOp)
    }

    /// Median nanoseconds of this thread's CPU time over `runs` calls of `body`, each timed alone:
    /// for a call long enough to time by itself (a menu built, a listing served), which
    /// ``nanosecondsPerOp(opsPerCall:_:)`` would repeat to fill a round.
    static func medianCPUNanoseconds(runs: Int, _ body: () -> Void) -> Double {
        median(
            (0 ..< runs).map { _ in
                let start = threadCPUSeconds()
                body()
                return (threadCPUSeconds() - start) * 1e9
            })
    }

    static func threadCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
