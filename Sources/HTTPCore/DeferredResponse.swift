import Dispatch
import Synchronization

/// What a handler answers: a response now, or one that waits on work another thread finishes.
package enum HTTPReply: Sendable {
    case response(HTTPResponse)
    case deferred(DeferredResponse)
}

/// A response whose making waits on something another thread completes (a store's reply): the
/// handler returns it at once, and the server thread, freed meanwhile for other connections,
/// makes the response once ``ready()`` has been called.
///
/// Lifecycle: made with the closure that makes the response (`make`, run once, on the thread
/// that calls ``response()``, after ``ready()``), given transforms by ``map(_:)`` before it is
/// handed to the server, made ready exactly once (a second ``ready()`` is ignored), or cut short
/// by ``abandon(with:)``, whose response then replaces `make`'s.
///
/// Invariant: the action ``whenReady(_:)`` registers runs exactly once, on the thread that makes
/// it ready (or at once on the caller's, when it is ready already). All state sits behind one
/// `Mutex`; `make` and the transforms run outside it. Cost: one allocation and a few uncontended
/// lock acquisitions per deferred request.
package final class DeferredResponse: Sendable {
    private struct State {
        var isReady = false
        var action: (@Sendable () -> Void)?
        var transforms: [@Sendable (HTTPResponse) -> HTTPResponse] = []
        var abandonedWith: HTTPResponse?
    }

    private let make: @Sendable () -> HTTPResponse
    private let state = Mutex(State())

    package init(_ make: @escaping @Sendable () -> HTTPResponse) {
        self.make = make
    }

    /// The work `make` waits for is done: runs the registered action (a server resumes the
    /// connection). Call it once, from any thread; later calls do nothing.
    package func ready() {
        finish(abandonedWith: nil)
    }

    /// Ends the wait without `make`: ``response()`` answers `response` (transforms applied), and a
    /// later ``ready()`` does nothing. A server stopping uses it for requests still waiting.
    package func abandon(with response: HTTPResponse) {
        finish(abandonedWith: response)
    }

    /// Marks it ready (the first time only) and runs the registered action outside the lock.
    private func finish(abandonedWith response: HTTPResponse?) {
        let action: (@Sendable () -> Void)? = state.withLock { state in
            guard !state.isReady else { return nil }
            state.isReady = true
            state.abandonedWith = response
            defer { state.action = nil }
            return state.action
        }
        action?()
    }

    /// Adds a step applied, in order, to the response made; returns self. Call it before the
    /// response is made (the server makes it only after every handler layer has returned).
    @discardableResult
    package func map(_ transform: @escaping @Sendable (HTTPResponse) -> HTTPResponse) -> DeferredResponse {
        state.withLock { $0.transforms.append(transform) }
        return self
    }

    /// Registers `action` to run once ready; false (and `action` not kept) when ready already.
    package func whenReady(_ action: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard !state.isReady else { return false }
            state.action = action
            return true
        }
    }

    /// Blocks the calling thread until ready (for callers with no event loop: tests, in-process use).
    package func wait() {
        let done = DispatchSemaphore(value: 0)
        if whenReady({ done.signal() }) { done.wait() }
    }

    /// The response: `make`'s (or the abandoning one), with every transform applied. Call it once,
    /// after ready.
    package func response() -> HTTPResponse {
        let (abandoned, transforms) = state.withLock { ($0.abandonedWith, $0.transforms) }
        var response = abandoned ?? make()
        for transform in transforms { response = transform(response) }
        return response
    }

    /// ``wait()``, then ``response()``.
    package func waitForResponse() -> HTTPResponse {
        wait()
        return response()
    }
}

extension HTTPReply {
    /// The response, waiting for a deferred one on the calling thread.
    package func waitForResponse() -> HTTPResponse {
        switch self {
        case .response(let response): response
        case .deferred(let deferred): deferred.waitForResponse()
        }
    }

    /// This reply with `transform` applied to its response (now, or when the deferred one is made).
    package func map(_ transform: @escaping @Sendable (HTTPResponse) -> HTTPResponse) -> HTTPReply {
        switch self {
        case .response(let response): .response(transform(response))
        case .deferred(let deferred): .deferred(deferred.map(transform))
        }
    }
}
