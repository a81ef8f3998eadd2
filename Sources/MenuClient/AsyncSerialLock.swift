import Synchronization

/// A lock for async code: one holder at a time across suspension points, waiters served in
/// arrival order. ``MenuTable`` holds it for each write and each catch-up, so that the revision a
/// write's `If-Match` names is the one its answer is applied to. Lock and unlock are O(1) (O(waiters) to dequeue).
final class AsyncSerialLock: Sendable {
    private struct State {
        var isLocked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    func lock() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state in
                if state.isLocked {
                    state.waiters.append(continuation)
                    return false
                }
                state.isLocked = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    /// Hands the lock to the next waiter, or frees it.
    func unlock() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.isLocked = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }

    /// Runs `body` holding the lock.
    func withLock<T>(_ body: () async throws(MenuClientError) -> T) async throws(MenuClientError) -> T {
        await lock()
        defer { unlock() }
        return try await body()
    }
}
