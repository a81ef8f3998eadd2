import Foundation
import Synchronization
import Testing

@testable import MenuSessionsRedis

@Suite("WriteGate: one write of a session at a time, in arrival order, waiting or not")
struct WriteGateTests {
    @Test func queuedWritesRunInArrivalOrderEachHoldingTheGate() {
        let gate = WriteGate()
        #expect(gate.acquire { Issue.record("ran although the gate was free") })
        let order = Mutex<[Int]>([])
        for index in 0 ..< 5 {
            #expect(!gate.acquire { order.withLock { $0.append(index) } })
        }
        for _ in 0 ..< 5 { gate.release() }  // each release hands the gate to the next in line
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 4])
        gate.release()
        #expect(gate.acquire { Issue.record("ran although the gate was free") })  // free again
    }

    @Test func aBlockingWaiterGetsItsTurnAfterTheQueuedOnesOrGivesUpAfterItsTimeout() {
        let gate = WriteGate()
        #expect(gate.wait(timeout: .milliseconds(10)))
        #expect(!gate.wait(timeout: .milliseconds(20)))  // held: gives up, and is no longer queued
        let queuedRan = Mutex(false)
        #expect(!gate.acquire { queuedRan.withLock { $0 = true } })
        let waited = Mutex<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let got = gate.wait(timeout: .seconds(30))
            waited.withLock { $0 = got }
            done.signal()
        }.start()
        usleep(50_000)
        gate.release()  // to the queued closure
        #expect(queuedRan.withLock { $0 })
        #expect(waited.withLock { $0 } == nil)  // still behind it
        gate.release()  // to the blocking waiter
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(waited.withLock { $0 } == true)
        gate.release()
        #expect(gate.wait(timeout: .milliseconds(10)))
    }

    @Test func manyThreadsNeverHoldItTogether() {
        let gate = WriteGate()
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let finished = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0 ..< 200 {
                let body: @Sendable () -> Void = {
                    if inside.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
                        overlaps.add(1, ordering: .relaxed)
                    }
                    inside.subtract(1, ordering: .acquiringAndReleasing)
                    finished.add(1, ordering: .relaxed)
                    gate.release()
                }
                if (worker + round) % 2 == 0 {
                    if gate.acquire(orWhenFree: body) { body() }
                } else if gate.wait(timeout: .seconds(30)) {
                    body()
                }
            }
        }
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(finished.load(ordering: .relaxed) == 1_600)
    }
}
