import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The receiving end of Redis client-side caching (RESP2 tracking with REDIRECT): a thread of its
/// own connects, asks `CLIENT ID`, subscribes to `__redis__:invalidate` and reports each
/// invalidation message. Tracked connections redirect to ``subscription``'s `clientID`
/// (`CLIENT TRACKING on REDIRECT <id>`, typically in their `onConnect`).
///
/// Events, in order, on the listener thread: ``Event/subscribed(clientID:generation:)`` for each
/// new subscription (generation 1, 2, … one per successful subscribe); ``Event/invalidated(keys:)``
/// for each message with a key list; ``Event/flushAll`` for a message with a null key list
/// (FLUSHALL, FLUSHDB) and, first of all, whenever the subscription is lost (EOF, I/O error,
/// `CLIENT KILL`, or no answer to a PING within the timeout after an idle spell), since messages
/// may have been missed. It then reconnects with the same backoff rule as ``RedisConnection``.
///
/// The thread waits for input with `poll` in slices of at most 100 ms rather than a blocking
/// `redisGetReply` with a read timeout: hiredis 0.14 marks a blocking context dead when a read
/// times out, so a quiet subscription would be torn down at every timeout.
///
/// Invariant: ``subscription`` is nil unless the subscription it names is live (as far as the
/// thread knows); it is set before its `.subscribed` event and cleared before its `.flushAll`.
/// No event is delivered after ``stop()`` returns; until then the thread keeps the listener alive,
/// so an owner must call `stop()`. Thread-safe (`Sendable`). Cost: one thread and
/// one connection; an idle subscription wakes every 100 ms and pings Redis every few seconds.
package final class RedisInvalidationListener: Sendable {
    package enum Event: Sendable, Equatable {
        /// A new subscription (first or after a reconnect): tracked connections must redirect to `clientID`.
        case subscribed(clientID: Int, generation: Int)
        /// Keys some client changed.
        case invalidated(keys: [[UInt8]])
        /// Forget everything cached: the subscription was lost, or Redis sent a null key list (FLUSHALL).
        case flushAll
    }

    package static let channel = "__redis__:invalidate"

    package let endpoint: RedisEndpoint
    package let options: RedisOptions
    /// How long a subscription may stay quiet before the thread PINGs Redis (no answer within
    /// `options.timeout` counts as a loss: a stalled or unreachable server sends no EOF).
    package let idlePing: Duration
    private let onEvent: @Sendable (Event) -> Void
    private let state = Mutex(State())

    private struct State {
        var subscription: (clientID: Int, generation: Int)?
        var generation = 0
        var stopping = false
        var thread: pthread_t?
    }

    /// `onEvent` is called on the listener's thread, one event at a time; it must not call ``stop()``
    /// expecting to wait (from there `stop()` only asks the thread to end).
    /// `idlePing` nil: four times the timeout, at least 2 s.
    package init(
        endpoint: RedisEndpoint, options: RedisOptions, idlePing: Duration? = nil,
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.endpoint = endpoint
        self.options = options
        self.idlePing = idlePing ?? max(options.timeout * 4, .seconds(2))
        self.onEvent = onEvent
    }

    deinit { stop() }

    /// The live subscription's client id and generation; nil while down.
    package var subscription: (clientID: Int, generation: Int)? { state.withLock { $0.subscription } }

    /// Starts the thread (no-op while it runs).
    package func start() {
        state.withLock { state in
            guard state.thread == nil else { return }
            state.stopping = false
            var thread = pthread_t()
            let context = Unmanaged.passRetained(self).toOpaque()
            let status = pthread_create(&thread, nil, runInvalidationListener, context)
            precondition(status == 0, "pthread_create failed (\(status))")
            state.thread = thread
        }
    }

    /// Ends the thread and returns when it has ended (from the listener's own thread, in `onEvent`,
    /// it only asks it to end). `subscription` is nil afterwards.
    package func stop() {
        let thread: pthread_t? = state.withLock { state in
            state.stopping = true
            defer { state.thread = nil }
            return state.thread
        }
        guard let thread else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    /// The thread's body: subscribe, listen, and after a loss report `.flushAll` and back off.
    fileprivate func run() {
        var backoff: Duration? = nil
        while !stopping {
            var context: HiredisContext? = nil
            do throws(RedisError) {
                let opened = try HiredisContext.open(endpoint, options, selectDatabase: false)
                context = opened
                let id = try opened.command(Self.arguments("CLIENT", "ID"))
                guard case .integer(let clientID) = id else { throw .protocolViolation("CLIENT ID answered \(id)") }
                let subscribed = try opened.command(Self.arguments("SUBSCRIBE", Self.channel))
                guard case .array(let parts) = subscribed, parts.first == .bulk(Array("subscribe".utf8)) else {
                    throw .protocolViolation("SUBSCRIBE answered \(subscribed)")
                }
                backoff = nil
                let generation = state.withLock { state in
                    state.generation += 1
                    state.subscription = (clientID, state.generation)
                    return state.generation
                }
                onEvent(.subscribed(clientID: clientID, generation: generation))
                try listen(opened)
            } catch {
                // Lost or never made; both end below.
            }
            context?.free()
            let wasSubscribed = state.withLock { state in
                defer { state.subscription = nil }
                return state.subscription != nil
            }
            if stopping { break }
            if wasSubscribed { onEvent(.flushAll) }
            let step = backoff.map { min($0 * 2, options.maxBackoff) } ?? options.initialBackoff
            backoff = step
            pause(for: step)
        }
    }

    /// Reads messages until `stop()` (returns) or the connection fails (throws).
    private func listen(_ context: HiredisContext) throws(RedisError) {
        let slice = Int32(min(100, options.timeoutMilliseconds))
        let clock = ContinuousClock()
        var lastHeard = clock.now
        var pingSent: ContinuousClock.Instant? = nil
        while !stopping {
            while let reply = try context.bufferedReply() {
                lastHeard = clock.now
                pingSent = nil
                deliver(reply)
            }
            var poller = pollfd(fd: context.descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, slice)
            if ready > 0 {
                try context.readIntoBuffer()
                continue
            }
            if ready < 0, errno != EINTR { throw .connectionLost("poll: \(String(cString: strerror(errno)))") }
            if let pingSent {
                if clock.now - pingSent > options.timeout {
                    throw .connectionLost("no answer to PING within \(options.timeout)")
                }
            } else if clock.now - lastHeard > idlePing {
                try context.append(Self.arguments("PING"))
                try context.flush()
                pingSent = clock.now
            }
        }
    }

    /// Turns a pub/sub message into an event; subscription confirmations and PING answers are not events.
    private func deliver(_ reply: RedisReply) {
        guard case .array(let parts) = reply, parts.count == 3, parts[0] == .bulk(Array("message".utf8)) else { return }
        switch parts[2] {
        case .null:
            onEvent(.flushAll)
        case .array(let keys):
            onEvent(.invalidated(keys: keys.compactMap { if case .bulk(let key) = $0 { key } else { nil } }))
        case .bulk(let key):
            onEvent(.invalidated(keys: [key]))
        default:
            return
        }
    }

    /// Sleeps `duration` in 10 ms slices, returning early when stopping.
    private func pause(for duration: Duration) {
        let clock = ContinuousClock()
        let until = clock.now.advanced(by: duration)
        while !stopping, clock.now < until { usleep(10_000) }
    }

    private static func arguments(_ words: String...) -> [[UInt8]] { words.map { Array($0.utf8) } }
}

/// The listener thread's start routine: takes the retain `start()` made and runs the loop.
/// Called by pthread on the new thread, once.
private func runInvalidationListener(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let listener = Unmanaged<RedisInvalidationListener>.fromOpaque(context!).takeRetainedValue()
    listener.run()
    return nil
}
