import Dispatch
import MenuSessions
import Synchronization

/// Lets the writes of a session on this instance go one at a time, in arrival order, whether
/// their caller waits (``wait(timeout:)``, a blocking write) or not (``acquire(orWhenFree:)``, a
/// pipelined write that goes on when the write before it has been answered).
///
/// Invariant: at most one holder; ``release()`` hands the gate straight to the oldest waiter (so
/// a waiter, once queued, is never overtaken) or frees it. A queued closure runs on the thread
/// that releases, holding the gate. Cost: one short lock per call; a blocking waiter also a
/// semaphore.
final class WriteGate: Sendable {
    private struct Waiter {
        let number: Int
        let run: @Sendable () -> Void
    }

    private struct State {
        var held = false
        var waiters: [Waiter] = []
        var nextNumber = 0
    }

    private let state = Mutex(State())

    /// Takes the gate (true), or queues `then` to run, holding it, once the writes before it are
    /// done (false: `then` will run, on the thread that gives the gate back).
    func acquire(orWhenFree then: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard state.held else {
                state.held = true
                return true
            }
            state.waiters.append(Waiter(number: state.nextNumber, run: then))
            state.nextNumber &+= 1
            return false
        }
    }

    /// Takes the gate, waiting at most `timeout` behind the writes before this one; false when
    /// it did not get it in time (and then does not hold it).
    func wait(timeout: Duration) -> Bool {
        let granted = DispatchSemaphore(value: 0)
        let number: Int? = state.withLock { state in
            guard state.held else {
                state.held = true
                return nil
            }
            let number = state.nextNumber
            state.nextNumber &+= 1
            state.waiters.append(Waiter(number: number, run: { granted.signal() }))
            return number
        }
        guard let number else { return true }
        if granted.wait(timeout: .now() + .milliseconds(Int(SessionClock.milliseconds(of: timeout)))) == .success {
            return true
        }
        let stillQueued = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.number == number }) else { return false }
            state.waiters.remove(at: index)
            return true
        }
        if stillQueued { return false }
        granted.wait()  // handed over just as the wait ran out: it holds the gate now
        return true
    }

    /// Gives the gate to the oldest waiter (running a queued closure here) or frees it.
    func release() {
        let next: Waiter? = state.withLock { state in
            guard !state.waiters.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.run()
    }
}
