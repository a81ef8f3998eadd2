import Synchronization

/// A response body written while it is sent, for as long as the connection lasts (a
/// `text/event-stream`): producers on any thread ``write(_:)`` bytes and ``finish()`` it; the
/// server reads them out as they come, and in between parks the connection, holding no thread.
///
/// Lifecycle: made open; bytes written are kept in order until the server reads them; ``finish()``
/// ends it once what was written has been read; ``close()`` (the producer gives up) or the
/// connection ending (``connectionEnded()``, called by the server) drops what is pending. Every
/// write after the end is refused (false). Each ``onEnd(_:)`` action runs exactly once, when the
/// connection has ended, on the thread that learnt it.
///
/// Invariant: `pending` holds at most ``limit`` bytes (a write that would pass it closes the body:
/// a client that does not read is let go, and catches up when it comes back); the server's
/// connection is parked (``read(into:park:)`` returned ``ReadResult/parked``) only while nothing is
/// pending and the body is open, and every write or end after a park calls the wake action once;
/// a close calls it whether parked or not.
/// All state sits behind one `Mutex`; the park action runs under it, and the wake action is
/// handed to exactly one writer per park (run outside the lock: the parked connection does nothing
/// until it runs). Cost: one copy of each byte in, one out; a few hundred bytes apart from what is
/// pending.
package final class StreamedBody: Sendable {
    /// What ``read(into:park:)`` gave the server.
    package enum ReadResult: Equatable, Sendable {
        /// This many bytes were copied (at least one).
        case bytes(Int)
        /// Nothing is pending: the connection was parked by `park`, and is woken by the next write.
        case parked
        /// Finished, and everything written has been read: the body is complete.
        case end
        /// Closed before it finished: the connection is to be dropped.
        case abort
    }

    private struct State {
        var pending: [UInt8] = []
        /// Bytes of `pending` already read (dropped in one go once they are half of it).
        var readOffset = 0
        var finished = false
        var closed = false
        var connectionEnded = false
        var wake: (@Sendable () -> Void)?
        var parked = false
        var onEnd: [@Sendable () -> Void] = []
    }

    /// The most bytes that may wait to be read.
    package let limit: Int
    private let state = Mutex(State())

    /// An open body that lets at most `limit` bytes wait for a slow reader.
    package init(limit: Int = 1 << 20) {
        precondition(limit > 0, "a stream must hold at least one byte")
        self.limit = limit
    }

    // MARK: The producer's side

    /// Appends `bytes` to what the connection sends; false (nothing kept) once the body is
    /// finished, closed or its connection gone, and when `bytes` would take what is pending past
    /// ``limit`` (the body is then closed).
    @discardableResult
    package func write(_ bytes: [UInt8]) -> Bool {
        let (accepted, wake) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            guard !state.finished, !state.closed, !state.connectionEnded else { return (false, nil) }
            guard state.pending.count - state.readOffset + bytes.count <= limit else {
                state.closed = true
                state.pending = []
                state.readOffset = 0
                return (false, Self.wakeToEnd(&state))
            }
            state.pending.append(contentsOf: bytes)
            return (true, Self.unpark(&state))
        }
        wake?()
        return accepted
    }

    /// Ends the body once what was written has been sent.
    package func finish() {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.finished, !state.closed else { return nil }
            state.finished = true
            return Self.unpark(&state)
        }
        wake?()
    }

    /// Ends the body now, dropping what is pending: the server drops the connection.
    package func close() {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.closed else { return nil }
            state.closed = true
            state.pending = []
            state.readOffset = 0
            return Self.wakeToEnd(&state)
        }
        wake?()
    }

    /// Whether writes are still taken: not finished, closed, or ended with its connection.
    package var isOpen: Bool {
        state.withLock { !$0.finished && !$0.closed && !$0.connectionEnded }
    }

    /// Runs `action` once the connection has ended (at once when it has): the place to forget the
    /// body. Actions run in the order they were given.
    package func onEnd(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard !state.connectionEnded else { return true }
            state.onEnd.append(action)
            return false
        }
        if runNow { action() }
    }

    // MARK: The server's side

    /// Sets what wakes the parked connection (the server resumes it); call it before the first read.
    package func setWake(_ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.wake = wake }
    }

    /// Copies pending bytes into `buffer`; with none pending and the body open, calls `park` (under
    /// the body's lock, so no write can slip between the look and the park) and answers ``ReadResult/parked``.
    package func read(into buffer: UnsafeMutableRawBufferPointer, park: () -> Void) -> ReadResult {
        state.withLock { state in
            if state.closed || state.connectionEnded { return .abort }
            let available = state.pending.count - state.readOffset
            guard available > 0 else {
                if state.finished { return .end }
                park()
                state.parked = true
                return .parked
            }
            let count = min(available, buffer.count)
            guard count > 0 else { return .bytes(0) }
            state.pending.withUnsafeBytes { pending in
                buffer.baseAddress!.copyMemory(from: pending.baseAddress! + state.readOffset, byteCount: count)
            }
            state.readOffset += count
            if state.readOffset == state.pending.count {
                state.pending.removeAll(keepingCapacity: state.pending.capacity <= 16_384)
                state.readOffset = 0
            } else if state.readOffset >= state.pending.count / 2 {
                state.pending.removeFirst(state.readOffset)
                state.readOffset = 0
            }
            return .bytes(count)
        }
    }

    /// Whether the connection is parked now (the server waits for no parked body when it stops).
    package var isParked: Bool {
        state.withLock { $0.parked }
    }

    /// The connection is gone (sent in full, dropped by the client, or the server stopped): runs
    /// the ``onEnd(_:)`` action; later writes are refused. Called once by the server.
    package func connectionEnded() {
        let actions = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.connectionEnded else { return [] }
            state.connectionEnded = true
            state.pending = []
            state.readOffset = 0
            state.wake = nil
            state.parked = false
            defer { state.onEnd = [] }
            return state.onEnd
        }
        for action in actions { action() }
    }

    /// A close: hands back the wake action also when the connection is not parked (the server
    /// may be waiting for a client that reads nothing, and must drop it now).
    private static func wakeToEnd(_ state: inout State) -> (@Sendable () -> Void)? {
        state.parked = false
        return state.wake
    }

    /// Marks the connection awake and hands back the wake action to run, when it was parked.
    private static func unpark(_ state: inout State) -> (@Sendable () -> Void)? {
        guard state.parked else { return nil }
        state.parked = false
        return state.wake
    }
}
