import Dispatch
import HTTPCore
import MenuSessions
import Synchronization

/// Requests following a session's changes, none holding a thread: long polls
/// (`GET /changes?since=R&wait=S`, a ``DeferredResponse`` whose connection is suspended) and event
/// streams (``ChangeStream``). A long poll is released by the first of a write that takes its
/// session past `R`, the session's deletion, its deadline, or ``close()`` (the server draining);
/// its response is then made from the store as it is at that moment. A stream is told of every
/// such news (it looks, and writes what it finds) until its connection ends; ``close()`` ends it.
///
/// Invariant: a waiter sits in `waiting` under its key from ``register(_:since:for:_:)`` until it
/// is released, exactly once; a stream sits in `streams` from ``register(_:)`` until its
/// connection ends; `open` counts both and never passes ``limit``. Cost: O(1) to register,
/// O(followers of the key) to notify, one Dispatch timer per follower; a few hundred bytes each
/// beside its connection.
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
        var streams: [Key: [ObjectIdentifier: ChangeStream]] = [:]
        var streamCount = 0
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

    /// Long polls and streams held now, the streams among them, and registrations refused at
    /// ``limit`` since start.
    package var figures: (open: Int, streams: Int, refused: Int) {
        let (open, streams) = state.withLock { ($0.open, $0.streamCount) }
        return (open, streams, refusals.load(ordering: .relaxed))
    }

    /// Holds `stream` until its connection ends, telling it of its key's news; nothing is held at
    /// ``limit`` (the refusal counted) or once closed.
    package func register(_ stream: ChangeStream) -> Registration {
        let registration = state.withLock { state -> Registration in
            guard !state.closed else { return .closed }
            guard state.open < limit else { return .full }
            state.streams[stream.key, default: [:]][ObjectIdentifier(stream)] = stream
            state.streamCount += 1
            state.open += 1
            return .held
        }
        guard registration == .held else {
            if registration == .full { refusals.add(1, ordering: .relaxed) }
            return registration
        }
        // Strong captures (no weak side tables): the body drops its end actions once they ran.
        let (key, id) = (stream.key, ObjectIdentifier(stream))
        stream.body.onEnd { [self] in forget(key, id) }
        return .held
    }

    /// Drops the stream `id` of `key` (its connection ended).
    private func forget(_ key: Key, _ id: ObjectIdentifier) {
        state.withLock { state in
            guard state.streams[key]?.removeValue(forKey: id) != nil else { return }
            if state.streams[key]?.isEmpty == true { state.streams[key] = nil }
            state.streamCount -= 1
            state.open -= 1
        }
    }

    /// The streams of `key` (all keys: nil) now.
    private func streams(of key: Key?) -> [ChangeStream] {
        state.withLock { state in
            guard let key else { return state.streams.values.flatMap(\.values) }
            return state.streams[key].map { Array($0.values) } ?? []
        }
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

    /// `key` has reached `revision`: releases its waiters that hold an older one; its streams look.
    package func notify(_ key: Key, revision: Int) {
        release(key) { $0.since < revision }
        for stream in streams(of: key) { stream.changed() }
    }

    /// `key` is gone (a deleted session): releases all its waiters, whose responses say so; its
    /// streams look, find it gone and end.
    package func end(_ key: Key) {
        release(key) { _ in true }
        for stream in streams(of: key) { stream.changed() }
    }

    /// Releases every waiter, ends every stream (`server_stopping`) and holds none from now on
    /// (the server is draining): each long poll answers what it has now, so that a drain does not
    /// wait out the long polls.
    package func close() {
        state.withLock { $0.closed = true }
        releaseWaiters()
        for stream in streams(of: nil) { stream.stop(.serverStopping) }
    }

    /// Releases every waiter held now (each answers what it has now), and has every stream look:
    /// news may have been missed, or the menu was reloaded.
    package func releaseAll() {
        releaseWaiters()
        for stream in streams(of: nil) { stream.changed() }
    }

    /// Releases every waiter held now.
    private func releaseWaiters() {
        let released = state.withLock { state in
            let released = state.waiting.values.flatMap(\.values)
            state.waiting = [:]
            state.open -= released.count
            return released
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
