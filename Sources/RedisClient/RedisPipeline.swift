import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Commands from many threads sent to Redis in batches by one thread of its own, so that a thread
/// submitting one need not wait for its reply: it is handed to the command's completion.
///
/// While a batch is on the wire, commands submitted meanwhile queue up and go out together as the
/// next batch (one write, one read of all replies), so the round trips, and the sleeps and
/// wake-ups they cost on both sides, are shared by as many commands as arrived during one. With
/// one command at a time it costs what a blocking call costs, plus one hand-over between threads.
///
/// Invariant: every submitted command's completion is called exactly once, on the pipeline's
/// thread (or, after ``stop()``, on the submitting thread): with its reply, or with the
/// ``RedisError`` that ended its batch (a lost connection fails every command of its batch; each
/// may or may not have run). Commands go to Redis in submission order, at most ``maxBatch`` per
/// batch, over the pipeline thread's own connection of `pool` (so the pool's `onConnect`, its
/// reconnect and backoff apply). Thread-safe (`Sendable`). Cost: per command one lock and an
/// array append to submit; per batch one wake-up (only when the thread was idle), one write and
/// the reads of its replies. The thread holds the pipeline until ``stop()``: an owner must call it.
///
/// With a ``queueTimeout``, nothing waits in the queue longer than that: a command found older
/// when its batch is taken, and a ``perform(_:)`` whose turn has not come by then, fail with
/// ``RedisError/queuedTooLong(waited:ahead:)`` and are never sent (one clock reading per submit
/// and per batch).
package final class RedisPipeline: Sendable {
    /// What a command is.
    package enum Command: Sendable {
        /// Arguments, the command name first.
        case arguments([[UInt8]])
        /// `EVALSHA` of `script` (its hash loaded on the pipeline's connection first when it has
        /// none). A `NOSCRIPT` error reply (Redis restarted or flushed its scripts) is handed over
        /// as it is: the submitter decides again, for example with ``RedisConnection/evaluate(_:keys:arguments:)``.
        case script(RedisScript, keys: [[UInt8]], arguments: [[UInt8]])
    }

    /// A command's outcome: its reply and what its `prepare` step answered (false without one).
    package typealias Outcome = Result<(reply: RedisReply, prepared: Bool), RedisError>

    /// A command in RESP form, encoded by ``submit(_:prepare:then:)`` on the submitting thread.
    private enum Wire: Sendable {
        /// A whole command.
        case command([UInt8])
        /// `EVALSHA`, the script's hash on the pipeline's connection, then `tail` (the key count,
        /// the keys, the arguments): `count` items in all.
        case script(RedisScript, count: Int, tail: [UInt8])

        /// About the bytes it takes in a batch (an `EVALSHA` header and hash at most 64).
        var byteCount: Int {
            switch self {
            case .command(let bytes): bytes.count
            case .script(_, _, let tail): tail.count + 64
            }
        }

        init(_ command: Command) {
            switch command {
            case .arguments(let arguments): self = .command(RedisWire.command(arguments))
            case .script(let script, let keys, let arguments):
                self = .script(
                    script, count: 3 + keys.count + arguments.count,
                    tail: RedisWire.scriptTail(keys: keys, arguments: arguments))
            }
        }
    }

    private struct Job: Sendable {
        let prepare: (@Sendable (RedisConnection) throws(RedisError) -> Bool)?
        let wire: Wire
        let completion: @Sendable (Outcome) -> Void
        let queuedAt: ContinuousClock.Instant
        /// Entries queued before it when it was submitted.
        var ahead = 0
    }

    /// A queued command, or work run on the pipeline's connection in its place in the queue.
    private enum Entry: Sendable {
        case command(Job)
        /// Called with the connection (nil once stopped), after every command queued before it.
        case work(@Sendable (RedisConnection?) -> Void)
    }

    private struct State {
        var queue: [Entry] = []
        /// The thread found the queue empty and waits on `wake`: the next submit signals it.
        var sleeping = false
        var stopping = false
        /// Commands of the batch the thread is sending (0 when it is idle).
        var sending = 0
        var thread: pthread_t?
    }

    package let pool: RedisConnectionPool
    /// The most commands sent as one batch.
    package let maxBatch: Int
    /// The longest a command or a ``perform(_:)`` waits in the queue; nil: no bound.
    package let queueTimeout: Duration?
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let batchCount = Atomic<Int>(0)
    private let commandCount = Atomic<Int>(0)

    /// Starts the thread; it connects on its first batch.
    package init(pool: RedisConnectionPool, maxBatch: Int = 128, queueTimeout: Duration? = nil) {
        self.pool = pool
        self.maxBatch = max(1, maxBatch)
        self.queueTimeout = queueTimeout
        state.withLock { state in
            var thread = pthread_t()
            let context = Unmanaged.passRetained(self).toOpaque()
            let status = pthread_create(&thread, nil, runRedisPipeline, context)
            precondition(status == 0, "pthread_create failed (\(status))")
            state.thread = thread
        }
    }

    /// Queues `command`, encoded here, on the calling thread (the pipeline's thread only copies it
    /// into its batch). `prepare`, when given, runs on the pipeline's connection right before the
    /// command's batch is written (to put the connection in a state the command needs, such as a
    /// tracking subscription); it must not read replies of its own that are still in flight.
    package func submit(
        _ command: Command, prepare: (@Sendable (RedisConnection) throws(RedisError) -> Bool)? = nil,
        then completion: @escaping @Sendable (Outcome) -> Void
    ) {
        if case .arguments(let arguments) = command, arguments.isEmpty {
            return completion(.failure(.protocolViolation("a command needs at least its name")))
        }
        let job = Job(prepare: prepare, wire: Wire(command), completion: completion, queuedAt: .now)
        if enqueue(.command(job)) == nil { completion(.failure(Self.stopped)) }
    }

    /// Runs `body` on the pipeline's connection, after every command queued before it, and
    /// returns what it returns; the calling thread waits (called from a completion, on the
    /// pipeline's thread, it runs at once), at most ``queueTimeout`` for its turn: then `body`
    /// never runs and it throws ``RedisError/queuedTooLong(waited:ahead:)``. For a caller that needs all its
    /// commands on one connection (tracking with `NOLOOP` reports a connection's writes to every
    /// other connection that read the key) and sends some of them blocking.
    package func perform<Result: Sendable>(_ body: @escaping @Sendable (RedisConnection) throws(RedisError) -> Result)
        throws(RedisError) -> Result
    {
        // From the pipeline's own thread (a completion): at once, between its batches.
        if state.withLock({ $0.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }) {
            return try pool.withConnection(body)
        }
        let outcome = Mutex<Swift.Result<Result, RedisError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let turn = PerformTurn()
        let work: @Sendable (RedisConnection?) -> Void = { connection in
            guard turn.take() else { return }  // its caller gave up waiting: never runs
            let result: Swift.Result<Result, RedisError>
            if let connection {
                do throws(RedisError) { result = .success(try body(connection)) } catch { result = .failure(error) }
            } else {
                result = .failure(Self.stopped)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        guard let ahead = enqueue(.work(work)) else { throw Self.stopped }
        if let queueTimeout, done.wait(timeout: .now() + .nanoseconds(Self.nanoseconds(of: queueTimeout))) == .timedOut
        {
            if turn.giveUp() { throw .queuedTooLong(waited: queueTimeout, ahead: ahead) }
            done.wait()  // its turn came just now: `body` runs, bounded by the connection's own timeout
        } else if queueTimeout == nil {
            done.wait()
        }
        return try outcome.withLock { $0 ?? .failure(Self.stopped) }.get()
    }

    private static func nanoseconds(of duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }

    private static var stopped: RedisError { .connectionLost("the Redis pipeline has stopped") }

    /// Queues `entry`, waking the thread when it sleeps; returns how many entries were ahead of it
    /// (queued, or in the batch being sent), nil once stopped.
    private func enqueue(_ entry: Entry) -> Int? {
        let (ahead, signal) = state.withLock { state -> (Int?, Bool) in
            guard !state.stopping else { return (nil, false) }
            let ahead = state.queue.count + state.sending
            if case .command(var job) = entry {
                job.ahead = ahead
                state.queue.append(.command(job))
            } else {
                state.queue.append(entry)
            }
            defer { state.sleeping = false }
            return (ahead, state.sleeping)
        }
        if signal { wake.signal() }
        return ahead
    }

    /// Fails, unsent, the commands of `batch` queued for longer than ``queueTimeout``; returns the others.
    private func droppingExpired(_ batch: [Job]) -> [Job] {
        guard let queueTimeout else { return batch }
        let now = ContinuousClock.now
        return batch.filter { job in
            guard now - job.queuedAt > queueTimeout else { return true }
            job.completion(.failure(.queuedTooLong(waited: queueTimeout, ahead: job.ahead)))
            return false
        }
    }

    /// Batches written so far, and the commands they carried (their ratio is the mean batch).
    package var figures: (batches: Int, commands: Int) {
        (batchCount.load(ordering: .relaxed), commandCount.load(ordering: .relaxed))
    }

    /// Ends the thread once the batch on the wire is answered, fails the commands still queued
    /// (and any submitted later), and returns when the thread has ended.
    package func stop() {
        let (thread, signal) = state.withLock { state -> (pthread_t?, Bool) in
            state.stopping = true
            defer {
                state.thread = nil
                state.sleeping = false
            }
            return (state.thread, state.sleeping)
        }
        if signal { wake.signal() }
        if let thread { pthread_join(thread, nil) }
    }

    /// The thread's body: take what is queued, send it, hand the replies over; sleep when idle.
    ///
    /// The thread keeps the ordinary scheduling policy. Under `SCHED_BATCH` (tried) it was never
    /// woken ahead of a running thread: on a core other processes also use, each batch's reply
    /// waited out their time slices, and toggles fell to 2.6-3.5k/s against 5.7-6.7k with the
    /// ordinary policy (alternating runs at load 5, `BENCH_PIN=1`); on a quiet machine it had
    /// gained 18.2-20.8k against 17.1-18.3k.
    fileprivate func run() {
        while true {
            let (batch, stopping) = state.withLock { state -> ([Entry], Bool) in
                if state.stopping {
                    defer { state.queue = [] }
                    return (state.queue, true)
                }
                guard !state.queue.isEmpty else {
                    state.sleeping = true
                    state.sending = 0
                    return ([], false)
                }
                let count = min(state.queue.count, maxBatch)
                state.sending = count
                defer { state.queue.removeFirst(count) }
                return (Array(state.queue.prefix(count)), false)
            }
            if stopping {
                for entry in batch {
                    switch entry {
                    case .command(let job): job.completion(.failure(Self.stopped))
                    case .work(let work): work(nil)
                    }
                }
                return
            }
            if batch.isEmpty {
                wake.wait()
                continue
            }
            // Commands go out together up to the next work entry, which runs after them.
            var commands: [Job] = []
            for entry in batch {
                switch entry {
                case .command(let job): commands.append(job)
                case .work(let work):
                    if !commands.isEmpty { send(commands) }
                    commands = []
                    do { try pool.withConnection { connection throws(RedisError) in work(connection) } } catch {}
                }
            }
            if !commands.isEmpty { send(commands) }
        }
    }

    private func send(_ queued: [Job]) {
        let batch = droppingExpired(queued)
        guard !batch.isEmpty else { return }
        let outcomes: [Outcome]
        do {
            outcomes = try pool.withConnection { connection throws(RedisError) -> [Outcome] in
                var prepared: [Bool] = []
                prepared.reserveCapacity(batch.count)
                var wire: [UInt8] = []
                wire.reserveCapacity(batch.reduce(0) { $0 + $1.wire.byteCount })
                for job in batch {
                    prepared.append(try job.prepare?(connection) ?? false)
                    switch job.wire {
                    case .command(let bytes): wire.append(contentsOf: bytes)
                    case .script(let script, let count, let tail):
                        RedisWire.appendScriptHead(count: count, hash: try connection.scriptHash(script), to: &wire)
                        wire.append(contentsOf: tail)
                    }
                }
                let replies = try connection.pipeline(encoded: wire, count: batch.count)
                return zip(replies, prepared).map { .success(($0, $1)) }
            }
        } catch {
            outcomes = Array(repeating: .failure(error), count: batch.count)
        }
        batchCount.add(1, ordering: .relaxed)
        commandCount.add(batch.count, ordering: .relaxed)
        for (job, outcome) in zip(batch, outcomes) { job.completion(outcome) }
    }
}

/// Whether a ``RedisPipeline/perform(_:)`` runs: taken by the pipeline's thread when its turn
/// comes, or given up by its caller when it waited too long; whichever comes first wins.
private final class PerformTurn: Sendable {
    private let state = Atomic<Int>(0)  // 0 queued, 1 taken, 2 given up

    func take() -> Bool { state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged }

    func giveUp() -> Bool { state.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing).exchanged }
}

/// The pipeline thread's start routine: takes the retain `init` made and runs the loop.
private func runRedisPipeline(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let pipeline = Unmanaged<RedisPipeline>.fromOpaque(context!).takeRetainedValue()
    pipeline.run()
    return nil
}
