import Dispatch
import HTTPCore
import MenuSessions
import Testing

@testable import MenuService

/// The waits of long polls: a waiter is released by a change past its revision of its own key
/// only, by its key's end, by its deadline, or by the server draining; never twice; `limit` of
/// them at most, the refusals counted; after ``ChangeWaits/close()`` none is held.
@Suite struct ChangeWaitsTests {
    // `whenReady` registers an action only while a deferred response is not ready: `false` means released.

    @Test func aChangePastItsRevisionReleasesTheWaitersOfItsKeyOnly() {
        let waits = ChangeWaits(limit: 10)
        let (one, two) = (SessionID.random(), SessionID.random())
        let atThree = DeferredResponse { HTTPResponse(status: 200, headers: [], body: []) }
        let atFive = DeferredResponse { HTTPResponse(status: 200, headers: [], body: []) }
        let other = DeferredResponse { HTTPResponse(status: 200, headers: [], body: []) }
        #expect(waits.register(.session(one), since: 3, for: .seconds(60), atThree) == .held)
        #expect(waits.register(.session(one), since: 5, for: .seconds(60), atFive) == .held)
        #expect(waits.register(.session(two), since: 0, for: .seconds(60), other) == .held)
        #expect(waits.figures.open == 3)
        waits.notify(.session(one), revision: 5)  // past 3, not past 5
        #expect(!atThree.whenReady {})
        #expect(atFive.whenReady {})
        #expect(other.whenReady {})
        #expect(waits.figures.open == 2)
        waits.end(.session(one))
        #expect(!atFive.whenReady {})
        #expect(waits.figures.open == 1)
        waits.notify(.session(one), revision: 9)  // nothing left of it: nothing happens
        #expect(waits.figures.open == 1)
    }

    @Test func atTheLimitARegistrationIsRefusedAndCountedAndAReleaseMakesRoom() {
        let waits = ChangeWaits(limit: 2)
        let id = SessionID.random()
        func deferred() -> DeferredResponse { DeferredResponse { HTTPResponse(status: 200, headers: [], body: []) } }
        #expect(waits.register(.session(id), since: 0, for: .seconds(60), deferred()) == .held)
        #expect(waits.register(.defaultView, since: 0, for: .seconds(60), deferred()) == .held)
        let refused = deferred()
        #expect(waits.register(.session(id), since: 0, for: .seconds(60), refused) == .full)
        #expect(refused.whenReady {}, "a refused waiter is not held, so never released")
        #expect(waits.figures.open == 2 && waits.figures.refused == 1)
        waits.notify(.session(id), revision: 1)
        #expect(waits.register(.session(id), since: 1, for: .seconds(60), deferred()) == .held)
        #expect(waits.figures.refused == 1)
    }

    @Test func aWaiterIsReleasedAtItsDeadlineOnce() {
        let waits = ChangeWaits(limit: 10)
        let id = SessionID.random()
        let made = DispatchSemaphore(value: 0)
        let deferred = DeferredResponse { HTTPResponse(status: 200, headers: [], body: []) }
        #expect(waits.register(.session(id), since: 0, for: .milliseconds(20), deferred) == .held)
        #expect(deferred.whenReady { made.signal() })
        made.wait()  // the timer released it (a test gone wrong hangs here, under the suite's time limit)
        #expect(waits.figures.open == 0)
        waits.notify(.session(id), revision: 1)  // already gone: nothing is released twice
        #expect(waits.figures.open == 0)
    }

    @Test func closingReleasesEveryWaiterAndHoldsNoneAfter() {
        let waits = ChangeWaits(limit: 10)
        let held = (0 ..< 3).map { _ in DeferredResponse { HTTPResponse(status: 200, headers: [], body: []) } }
        for (index, deferred) in held.enumerated() {
            #expect(
                waits.register(index == 0 ? .defaultView : .session(.random()), since: 0, for: .seconds(60), deferred)
                    == .held)
        }
        waits.close()
        for deferred in held { #expect(!deferred.whenReady {}) }
        #expect(waits.figures.open == 0)
        let late = DeferredResponse { HTTPResponse(status: 200, headers: [], body: []) }
        #expect(waits.register(.defaultView, since: 0, for: .seconds(60), late) == .closed)
        #expect(waits.figures.open == 0 && waits.figures.refused == 0)
    }
}
