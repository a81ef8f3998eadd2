import Foundation
import ShardedCounters
import Synchronization
import Testing

@Suite("ThreadShardedCounters with one slot: a count many threads change and one reads")
struct ThreadShardedCounterTests {
    @Test func addsFromManyThreadsSumExactly() {
        let counter = ThreadShardedCounters(slots: 1)
        DispatchQueue.concurrentPerform(iterations: 40) { _ in
            for _ in 0 ..< 1_000 { counter.add(1, to: 0) }
        }
        #expect(counter.total(of: 0) == 40_000)
    }

    @Test func anAddOnOneThreadAndASubtractOnAnotherCancel() {
        let counter = ThreadShardedCounters(slots: 1)
        let adder = Thread { for _ in 0 ..< 500 { counter.add(1, to: 0) } }
        adder.start()
        while !adder.isFinished { usleep(1_000) }
        #expect(counter.total(of: 0) == 500)
        let subtractor = Thread { for _ in 0 ..< 500 { counter.add(-1, to: 0) } }
        subtractor.start()
        while !subtractor.isFinished { usleep(1_000) }
        #expect(counter.total(of: 0) == 0)
    }

    @Test func eachThreadAddsToOneCellOfItsOwn() {
        let counter = ThreadShardedCounters(slots: 1)
        counter.add(1, to: 0)
        counter.add(1, to: 0)
        #expect(counter.threadCount == 1)
        let thread = Thread { counter.add(5, to: 0) }
        thread.start()
        while !thread.isFinished { usleep(1_000) }
        #expect(counter.threadCount == 2)
        #expect(counter.total(of: 0) == 7)
    }

    @Test func countersDoNotShareCells() {
        let first = ThreadShardedCounters(slots: 1)
        let second = ThreadShardedCounters(slots: 1)
        first.add(3, to: 0)
        second.add(-2, to: 0)
        #expect(first.total(of: 0) == 3)
        #expect(second.total(of: 0) == -2)
    }

    @Test func aCounterWithoutAPthreadKeyIsOneSharedAtomicAndStaysExact() {
        // What a counter becomes when the process has no pthread key left (exhausting the keys
        // here would starve the tests running alongside).
        let counter = ThreadShardedCounters(slots: 1, threadCells: false)
        #expect(!counter.hasThreadCells)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0 ..< 1_000 { counter.add(1, to: 0) }
        }
        counter.add(-3, to: 0)
        #expect(counter.total(of: 0) == 7_997)
        #expect(counter.threadCount == 0)
    }
}
