import Dispatch
import HTTPCore
import MenuSessions
import Synchronization

/// Requests waiting for a session's next change (`GET /changes?since=R&wait=S`): each holds no
/// thread (its answer is a ``DeferredResponse``, its connection suspended) and is released by the
/// first of a write that takes its session past `R`, the session's deletion, its deadline, or
/// ``close()`` (the server draining). Releasing makes the deferred response ready; the
/// response is then made from the store as it is at that moment.
///
/// Invariant: a waiter sits in `waiting` under its key from ``register(_:since:for:_:)`` until it
/// is released, exactly once; `open` is the number of waiters in `waiting` and never passes
/// ``limit``. Cost: O(1) to register, O(waiters of the key) to notify, one Dispatch timer per
/// waiter; a few hundred bytes a waiter beside its connection.
package final class ChangeWaits: Sendable {
    /// What a waiter waits on: a session, or the default view of a request without one (which
    /// only a menu reload changes).
    package enum Key: Hashable, Sendable {
        case session(SessionID)
        case defaultView
    }

    private final class Waiter: Sendable {
        let since: Int
        let deferred: DeferredResponse
        init(since: Int, deferred: DeferredResponse) {
            self.since = since
            self.deferred = deferred
        }
    }

    private struct State {
        var waiting: [Key: [ObjectIdentifier: Waiter]] = [:]
        var open = 0
        var closed = false
    }

    /// What ``register(_:since:for:_:)`` did.
    package enum Registration: Equatable, Sendable {
        /// The response waits.
        case held
        /// ``limit`` waiters are held: the request is refused (`503`).
        case full
        /// ``close()`` was called (the server is draining): the request is answered at once.
        case closed
    }

    /// Waiters held at most (`--max-streams`); past it ``register(_:since:for:_:)`` refuses.
    package let limit: Int
    private let state = Mutex(State())
    private let refusals = Atomic<Int>(0)
    private let timers = DispatchQueue(label: "menu.change-waits")

    package init(limit: Int) {
        precondition(limit >= 0, "a negative limit of waits")
        self.limit = limit
    }

    /// Waiters held now, and registrations refused at ``limit`` since start.
    package var figures: (open: Int, refused: Int) {
        (state.withLock { $0.open }, refusals.load(ordering: .relaxed))
    }

    /// Holds `deferred` until a change past `since` of `key` is notified, or `duration` runs out;
    /// nothing is held at ``limit`` (the refusal counted) or once closed.
    package func register(_ key: Key, since: Int, for duration: Duration, _ deferred: DeferredResponse)
        -> Registration
    {
        let waiter = Waiter(since: since, deferred: deferred)
        let registration = state.withLock { state -> Registration in
            guard !state.closed else { return .closed }
            guard state.open < limit else { return .full }
            state.waiting[key, default: [:]][ObjectIdentifier(waiter)] = waiter
            state.open += 1
            return .held
        }
        guard registration == .held else {
            if registration == .full { refusals.add(1, ordering: .relaxed) }
            return registration
        }
        let (seconds, attoseconds) = duration.components
        let nanoseconds = Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
        timers.asyncAfter(deadline: .now() + .nanoseconds(max(0, nanoseconds))) { [self] in
            release(key) { $0 === waiter }
        }
        return .held
    }

    /// `key` has reached `revision`: releases its waiters that hold an older one.
    package func notify(_ key: Key, revision: Int) {
        release(key) { $0.since < revision }
    }

    /// `key` is gone (a deleted session): releases all its waiters, whose responses say so.
    package func end(_ key: Key) {
        release(key) { _ in true }
    }

    /// Releases every waiter and holds none from now on (the server is draining): each answers
    /// what it has now, so that a drain does not wait out the long polls.
    package func close() {
        state.withLock { $0.closed = true }
        releaseAll()
    }

    /// Releases every waiter held now: each answers what it has now.
    package func releaseAll() {
        let released = state.withLock { state in
            defer {
                state.waiting = [:]
                state.open = 0
            }
            return state.waiting.values.flatMap(\.values)
        }
        for waiter in released { waiter.deferred.ready() }
    }

    /// Removes the waiters of `key` that `matches` picks and makes their responses ready, outside the lock.
    private func release(_ key: Key, where matches: (Waiter) -> Bool) {
        let released: [Waiter] = state.withLock { state in
            guard var waiters = state.waiting[key] else { return [] }
            let picked = waiters.values.filter(matches)
            guard !picked.isEmpty else { return [] }
            for waiter in picked { waiters[ObjectIdentifier(waiter)] = nil }
            state.waiting[key] = waiters.isEmpty ? nil : waiters
            state.open -= picked.count
            return picked
        }
        for waiter in released { waiter.deferred.ready() }
    }
}
