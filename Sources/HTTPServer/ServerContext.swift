import CMicroHTTPD
import Dispatch
import HTTPCore
import ShardedCounters
import Synchronization

/// The long-lived state every libmicrohttpd callback of one daemon needs: the handler closures,
/// the body limit, the request-deadline sweeper, the count of requests in flight, the drain and
/// refusal flags and the deferred responses whose connections are suspended.
///
/// Invariant: one instance per daemon, retained with `Unmanaged.passRetained` before
/// `MHD_start_daemon` (its pointer is the `cls` of every callback) and released only after
/// `MHD_stop_daemon` has returned, so no callback can see it freed. It is genuinely `Sendable`
/// (immutable `let`s, atomics and a `Mutex`), because the callbacks run on several libmicrohttpd threads at once.
final class ServerContext: Sendable {
    let handler: @Sendable (HTTPRequest) -> HTTPReply
    let rejection: @Sendable (HTTPRejection) -> HTTPResponse
    let maxBodyBytes: Int
    /// The answer to a wait the server ends because it stops (``HTTPServerConfiguration/stoppingResponse``).
    let stoppingResponse: HTTPResponse
    /// Enforces the header and body deadlines; nil when none is configured (then no connection has a watch).
    let requestDeadlines: RequestDeadlineSweeper

    /// Touched on every request: a counter per thread, each on its own cache lines, so the
    /// threads serving requests do not bounce one line between their cores.
    private let inFlightCount = ThreadShardedCounters(slots: 1)
    /// Connections libmicrohttpd reported started and not yet closed (``mhdNotifyConnection``).
    let openConnections = ThreadShardedCounters(slots: 1)
    private let draining = Atomic<Bool>(false)

    private struct State {
        var capturingLog = true
        var startupLog: [String] = []
    }

    private let state = Mutex(State())
    /// Deferred responses whose connection is suspended, until the resume has been asked for;
    /// once `closed` (the server is stopping) none is added.
    private struct Waits {
        var suspended: [ObjectIdentifier: DeferredResponse] = [:]
        /// Streamed bodies admitted and whose socket is not yet closed (``StreamSockets``).
        var streams: [ObjectIdentifier: StreamedBody] = [:]
        var closed = false
    }

    private let waits = Mutex(Waits())
    private let refusing = Atomic<Bool>(false)

    /// Resumes asked for while many connections are suspended, sent together (``resume(_:then:)``).
    private struct PendingResumes {
        var items: [(connection: SuspendedConnection, resumed: @Sendable () -> Void)] = []
        var scheduled = false
    }

    private let pendingResumes = Mutex(PendingResumes())
    private let resumeQueue = DispatchQueue(label: "HTTPServer.resumes")

    /// Suspended connections (waits) above which resumes are gathered
    /// (``HTTPServerConfiguration/gatherResumesAbove``).
    let gatherResumesAbove: Int
    /// The sockets of streamed responses, taken over from libmicrohttpd.
    let streamSockets: StreamSockets
    /// How long the first of gathered resumes waits for others.
    static let resumeWindow = DispatchTimeInterval.milliseconds(2)
    /// Resumes sent gathered so far (for tests).
    private let gatheredResumeCount = Atomic<Int>(0)

    init(
        handler: @escaping @Sendable (HTTPRequest) -> HTTPReply,
        rejection: @escaping @Sendable (HTTPRejection) -> HTTPResponse,
        maxBodyBytes: Int,
        stoppingResponse: HTTPResponse,
        requestDeadlines: RequestDeadlineSweeper,
        streamSockets: StreamSockets,
        gatherResumesAbove: Int = HTTPServerConfiguration().gatherResumesAbove
    ) {
        self.gatherResumesAbove = gatherResumesAbove
        self.streamSockets = streamSockets
        self.handler = handler
        self.rejection = rejection
        self.maxBodyBytes = maxBodyBytes
        self.stoppingResponse = stoppingResponse
        self.requestDeadlines = requestDeadlines
    }

    /// A request got its per-request state (first access-handler call).
    func requestBegan() {
        inFlightCount.add(1, to: 0)
    }

    /// libmicrohttpd reported the request completed, aborted or timed out.
    func requestEnded() {
        inFlightCount.add(-1, to: 0)
    }

    /// Requests that have begun and not yet been reported completed.
    var inFlight: Int {
        inFlightCount.total(of: 0)
    }

    /// From now on every response carries `Connection: close`, so keep-alive clients let go.
    func beginDraining() {
        draining.store(true, ordering: .releasing)
    }

    var isDraining: Bool {
        draining.load(ordering: .acquiring)
    }

    /// Suspends `connection` (`MHD_suspend_connection`; the caller is its libmicrohttpd thread,
    /// inside the access handler) until `deferred` is ready, then asks libmicrohttpd to resume it
    /// (`MHD_resume_connection`, from whichever thread made it ready: allowed at any time); the
    /// access handler is then called again and sends the response. At once when it is ready
    /// already. Returns false, suspending nothing, once ``closeWaits()`` has begun: the
    /// caller then answers at once.
    func suspend(_ connection: OpaquePointer, until deferred: DeferredResponse) -> Bool {
        let key = ObjectIdentifier(deferred)
        // Admitted under the lock `closeWaits` closes, so no connection is suspended after its
        // look at what waits: it answers (and resumes) every wait admitted before.
        let admitted = waits.withLock { waits in
            guard !waits.closed else { return false }
            waits.suspended[key] = deferred
            return true
        }
        guard admitted else { return false }
        MHD_suspend_connection(connection)
        let handle = SuspendedConnection(pointer: connection)
        let resume: @Sendable () -> Void = { [self] in
            self.resume(handle) { [self] in waits.withLock { _ = $0.suspended.removeValue(forKey: key) } }
        }
        if !deferred.whenReady(resume) { resume() }
        return true
    }

    /// Asks libmicrohttpd to resume `connection`, then runs `resumed`. At once while few
    /// connections are suspended; past ``gatherResumesAbove``, together with every other resume
    /// asked within ``resumeWindow``, on a queue of its own.
    ///
    /// Why: libmicrohttpd 0.9.75 (daemon.c, `resume_suspended_connections`) walks the whole list
    /// of a thread's suspended connections in each round that has a resume to do. One write that
    /// wakes 10,000 parked streams, one resume after the other, made its threads walk that list
    /// once per stream: a core spent in the walk, and the last event 544 ms after the write
    /// (`scripts/bench-admin-events`). Gathered, the walk runs once per window.
    func resume(_ connection: SuspendedConnection, then resumed: @escaping @Sendable () -> Void) {
        let suspended = waits.withLock { $0.suspended.count }
        guard suspended > gatherResumesAbove else {
            MHD_resume_connection(connection.pointer)
            return resumed()
        }
        let schedule = pendingResumes.withLock { pending -> Bool in
            pending.items.append((connection, resumed))
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        guard schedule else { return }
        resumeQueue.asyncAfter(deadline: .now() + Self.resumeWindow) { [self] in
            let items = pendingResumes.withLock { pending in
                pending.scheduled = false
                defer { pending.items = [] }
                return pending.items
            }
            for item in items { MHD_resume_connection(item.connection.pointer) }
            for item in items { item.resumed() }
            gatheredResumeCount.add(items.count, ordering: .relaxed)
        }
    }

    /// Resumes sent gathered so far (for tests).
    var gatheredResumes: Int { gatheredResumeCount.load(ordering: .relaxed) }

    /// Admits `body`, a streamed response about to be queued; false once ``closeWaits()`` has
    /// begun (the caller answers ``stoppingResponse`` instead).
    func admitStream(_ body: StreamedBody) -> Bool {
        waits.withLock { waits in
            guard !waits.closed else { return false }
            waits.streams[ObjectIdentifier(body)] = body
            return true
        }
    }

    /// A stream's socket is closed (or its take-over did not happen).
    func streamEnded(_ key: ObjectIdentifier) {
        waits.withLock { _ = $0.streams.removeValue(forKey: key) }
    }

    /// Streamed responses admitted and not yet ended (for tests).
    var openStreams: Int {
        waits.withLock { $0.streams.count }
    }

    /// From now on every request is refused (``isRefusingRequests``) and no connection is
    /// suspended; ends every wait still open with ``stoppingResponse``, finishes every streamed
    /// body (what was written is still sent, by ``StreamSockets``), and returns once each waiting
    /// connection's resume has been asked for: `MHD_stop_daemon` aborts the process if it finds a
    /// connection suspended.
    func closeWaits() {
        refusing.store(true, ordering: .releasing)
        let (open, streams) = waits.withLock { waits in
            waits.closed = true
            return (Array(waits.suspended.values), Array(waits.streams.values))
        }
        for deferred in open { deferred.abandon(with: stoppingResponse) }
        for body in streams { body.finish() }
        // A resume running on another thread:
        while !waits.withLock({ $0.suspended.isEmpty }) { usleep(1_000) }
    }

    /// Whether a request is answered ``HTTPRejection/serverStopping`` instead of being handled:
    /// from ``closeWaits()`` on.
    var isRefusingRequests: Bool {
        refusing.load(ordering: .acquiring)
    }

    /// Whether libmicrohttpd's messages are still wanted (only while the daemon starts).
    var isCapturingLog: Bool {
        state.withLock { $0.capturingLog }
    }

    /// Keeps one libmicrohttpd start-up message (a few at most).
    func record(logMessage: String) {
        state.withLock {
            if $0.capturingLog, $0.startupLog.count < 16 { $0.startupLog.append(logMessage) }
        }
    }

    /// Stops capturing and returns what libmicrohttpd said while starting.
    func finishStartupLog() -> [String] {
        state.withLock { state in
            state.capturingLog = false
            let messages = state.startupLog
            state.startupLog = []
            return messages
        }
    }
}

/// Per-request state behind libmicrohttpd's `*con_cls`, for requests that carry a body or wait
/// for a deferred response.
///
/// Invariant: created on the first access-handler call of a request that announces a body
/// (`Content-Length` > 0 or chunked), or on the final call of one without a body whose handler
/// answered with a ``DeferredResponse``; retained into `*con_cls` with `Unmanaged.passRetained`,
/// released exactly once by the request-completed callback. Requests without a body need no
/// object: `*con_cls` then holds a ``RequestMarker``. Only the libmicrohttpd thread that owns the
/// connection touches it, one call at a time, so it needs no lock and is deliberately not `Sendable`.
final class RequestState {
    enum Phase {
        /// Collecting the body; the handler runs on the final call.
        case receiving
        /// The body went over the limit: drop the rest, answer with the rejection on the final call.
        case rejected(HTTPRejection)
        /// The handler answered with a deferred response; the connection is suspended until it
        /// is ready, then the next call sends it.
        case waiting(DeferredResponse)
        /// A response has been queued.
        case answered
    }

    /// The body received so far (de-chunked).
    var body: [UInt8] = []
    var phase: Phase = .receiving
    /// Bytes thrown away after a streamed rejection.
    var discardedBytes = 0
}

/// A connection pointer handed to the thread that resumes it. libmicrohttpd allows
/// `MHD_resume_connection` from any thread, and the connection lives until it has been resumed
/// and completed (``ServerContext/closeWaits()`` sees to that at shutdown).
struct SuspendedConnection: @unchecked Sendable {
    let pointer: OpaquePointer
}
