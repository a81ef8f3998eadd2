@testable import HTTPServer
import Foundation
import Synchronization
import Testing

@Suite("ThreadShardedCounter: a count many threads change and one reads")
struct ThreadShardedCounterTests {
    @Test func addsFromManyThreadsSumExactly() {
        let counter = ThreadShardedCounter()
        DispatchQueue.concurrentPerform(iterations: 40) { _ in
            for _ in 0 ..< 1_000 { counter.add(1) }
        }
        #expect(counter.sum == 40_000)
    }

    @Test func anAddOnOneThreadAndASubtractOnAnotherCancel() {
        let counter = ThreadShardedCounter()
        let adder = Thread { for _ in 0 ..< 500 { counter.add(1) } }
        adder.start()
        while !adder.isFinished { usleep(1_000) }
        #expect(counter.sum == 500)
        let subtractor = Thread { for _ in 0 ..< 500 { counter.add(-1) } }
        subtractor.start()
        while !subtractor.isFinished { usleep(1_000) }
        #expect(counter.sum == 0)
    }

    @Test func eachThreadAddsToOneCellOfItsOwn() {
        let counter = ThreadShardedCounter()
        counter.add(1)
        counter.add(1)
        #expect(counter.threadCount == 1)
        let thread = Thread { counter.add(5) }
        thread.start()
        while !thread.isFinished { usleep(1_000) }
        #expect(counter.threadCount == 2)
        #expect(counter.sum == 7)
    }

    @Test func countersDoNotShareCells() {
        let first = ThreadShardedCounter()
        let second = ThreadShardedCounter()
        first.add(3)
        second.add(-2)
        #expect(first.sum == 3)
        #expect(second.sum == -2)
    }

    @Test func aCounterWithoutAPthreadKeyIsOneSharedAtomicAndStaysExact() {
        // What a counter becomes when the process has no pthread key left (exhausting the keys
        // here would starve the tests running alongside).
        let counter = ThreadShardedCounter(threadCells: false)
        #expect(!counter.hasThreadCells)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0 ..< 1_000 { counter.add(1) }
        }
        counter.add(-3)
        #expect(counter.sum == 7_997)
        #expect(counter.threadCount == 0)
    }
}
