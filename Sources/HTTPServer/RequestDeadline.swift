// Request deadlines: a request's line and headers must be complete within
// `HTTPServerConfiguration.headerTimeoutSeconds`, and then its body within as long again, however
// slowly their bytes trickle in. libmicrohttpd 0.9.75 has no such deadline (its connection timeout
// restarts at every byte) and calls the access handler only once the headers are complete, so the
// deadlines are kept here: a watch per connection (`MHD_OPTION_NOTIFY_CONNECTION`) and a sweeper
// that shuts slow ones down.

import CMicroHTTPD
import Dispatch
import ShardedCounters
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One TCP connection's progress through its requests, shared by the libmicrohttpd thread that
/// owns the connection (the only writer) and the ``RequestDeadlineSweeper`` (a reader).
///
/// Invariant: created and retained into the connection's `socket_context` at
/// `MHD_CONNECTION_NOTIFY_STARTED`, released at `MHD_CONNECTION_NOTIFY_CLOSED`. ``phase`` is
/// 4 × (requests completed) + the current request's ``Stage``; it only grows, so every new stage
/// shows the sweeper a new value.
///
/// Cost on the hot path: per request, one relaxed atomic load and store when its headers are
/// complete and again when it completes (and, for a request with a body, when the body is
/// complete), each after one `MHD_get_connection_info` call.
final class ConnectionWatch: Sendable {
    /// Where the current request is; the low two bits of ``phase``.
    enum Stage: Int {
        /// Its line and headers are arriving (or the connection waits for the next request).
        case headers = 0
        /// Headers complete, its body is arriving.
        case body = 1
        /// It has fully arrived: the handler runs or the response is being sent. No deadline.
        case answering = 2
    }

    /// The connection's socket, read once at `MHD_CONNECTION_NOTIFY_STARTED`.
    let socket: Int32
    /// When libmicrohttpd accepted the connection: the start of its first request.
    let acceptedAt: ContinuousClock.Instant
    private let phaseCounter = Atomic<Int>(0)

    init(socket: Int32, acceptedAt: ContinuousClock.Instant) {
        self.socket = socket
        self.acceptedAt = acceptedAt
    }

    /// 4 × requests completed + the current request's stage.
    var phase: Int { phaseCounter.load(ordering: .relaxed) }

    static func stage(of phase: Int) -> Stage { Stage(rawValue: phase & 3) ?? .answering }

    /// Moves the current request from `from` to `to`; anything else stays as it is.
    private func advance(from: Stage, to: Stage) {
        let phase = phaseCounter.load(ordering: .relaxed)
        if phase & 3 == from.rawValue { phaseCounter.store(phase - from.rawValue + to.rawValue, ordering: .relaxed) }
    }

    /// The first access-handler call of a request: its headers are complete.
    func headersCompleted(bodyFollows: Bool) { advance(from: .headers, to: bodyFollows ? .body : .answering) }

    /// The final access-handler call of a request with a body: the body is complete.
    func bodyReceived() { advance(from: .body, to: .answering) }

    /// libmicrohttpd reported the request completed: the connection waits for its next request.
    func requestCompleted() {
        let phase = phaseCounter.load(ordering: .relaxed)
        if phase & 3 != Stage.headers.rawValue { phaseCounter.store((phase | 3) + 1, ordering: .relaxed) }
    }
}

/// Shuts down every connection whose current request has not got its line and headers complete
/// within ``timeout`` of its start, or its body within ``timeout`` of its headers, whatever it
/// keeps sending meanwhile.
///
/// A request starts
/// - for the first request of a connection: when libmicrohttpd accepted the connection;
/// - for a later request on a keep-alive connection: when its bytes start arriving after the
///   previous response was sent (the sweeper notices the kernel's `tcpi_last_data_recv` moving
///   past the moment it first saw the connection waiting; without `TCP_INFO`, outside Linux, the
///   request counts from that moment itself). A keep-alive connection idle between requests is
///   left to libmicrohttpd's connection timeout.
/// Its body's time counts from the first sweep that sees the headers complete. Bytes arriving
/// never move a deadline; only the stage advancing (``ConnectionWatch/phase``) ends it. A request
/// is shut down between `timeout` and `timeout` + ``interval`` after its start (for a later
/// keep-alive request, after the sweep that noticed its bytes; for a body, after the sweep that
/// saw its headers complete).
///
/// Shutting down is `shutdown(2)` with `SHUT_RDWR` on the connection's socket: libmicrohttpd's poll
/// then sees the stream end and closes the connection its own way (per-IP count, callbacks,
/// memory), exactly as if the client had hung up. The client gets no answer; a request whose
/// stage advances in the very instant it is shut down is lost.
///
/// Invariant: ``entries`` holds exactly the watches of open connections, and `shutdown(2)` is only
/// called under its lock for a registered watch. libmicrohttpd calls `NOTIFY_CLOSED` (which takes
/// the lock to unregister) before it closes the socket (asserted there in debug builds), so the
/// descriptor is never one that was closed and perhaps reused.
///
/// Cost: one sweep every ``interval`` on its own queue, O(open connections) under the lock, plus
/// one `getsockopt(TCP_INFO)` per keep-alive connection waiting for its next request. The lock is
/// otherwise taken once when a connection opens and once when it closes, never per request.
final class RequestDeadlineSweeper: Sendable {
    /// How the sweeper sees one connection; only touched under the lock.
    private struct Entry {
        let watch: ConnectionWatch
        /// The phase being timed (stage headers or body).
        var timedPhase = 0
        /// When the sweeper first saw the current phase.
        var phaseSeenAt: ContinuousClock.Instant
        /// When the current stage started, once known.
        var stageStart: ContinuousClock.Instant?
        /// `shutdown(2)` has been called; libmicrohttpd has yet to close the connection.
        var shutDown = false
    }

    /// How long a request's line and headers may take, and then its body.
    let timeout: Duration
    /// Time between two sweeps.
    let interval: Duration = .milliseconds(250)
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)
    private let queue = DispatchQueue(label: "HTTPServer.RequestDeadlineSweeper")

    init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Starts sweeping (after the daemon started).
    func start() {
        let step = Int(interval / .milliseconds(1))
        timer.withLock { timer in
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(
                deadline: .now() + .milliseconds(step), repeating: .milliseconds(step), leeway: .milliseconds(step / 5))
            source.setEventHandler { [self] in sweep(now: .now) }
            source.resume()
            timer = source
        }
    }

    /// Stops sweeping; returns once no sweep runs any more. Safe to call more than once.
    func stop() {
        let stopped = timer.withLock { timer -> Bool in
            guard let source = timer.take() else { return false }
            source.cancel()
            return true
        }
        guard stopped else { return }
        queue.sync {}  // a sweep already running finishes before this returns
    }

    /// `MHD_CONNECTION_NOTIFY_STARTED`.
    func register(_ watch: ConnectionWatch) {
        let entry = Entry(watch: watch, phaseSeenAt: watch.acceptedAt, stageStart: watch.acceptedAt)
        entries.withLock { $0[ObjectIdentifier(watch)] = entry }
    }

    /// `MHD_CONNECTION_NOTIFY_CLOSED`, before libmicrohttpd closes the socket.
    func unregister(_ watch: ConnectionWatch) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(watch)) }
    }

    /// One sweep: shuts down every connection past its current stage's deadline at `now`.
    func sweep(now: ContinuousClock.Instant) {
        entries.withLock { entries in
            for index in entries.values.indices {
                var entry = entries.values[index]
                let phase = entry.watch.phase
                let stage = ConnectionWatch.stage(of: phase)
                guard !entry.shutDown, stage != .answering else { continue }
                if phase != entry.timedPhase {  // a new stage: a later request's headers, or a body
                    entry.timedPhase = phase
                    entry.phaseSeenAt = now
                    entry.stageStart = stage == .body ? now : nil
                }
                if entry.stageStart == nil {
                    entry.stageStart = Self.requestStart(of: entry, now: now)
                }
                if let start = entry.stageStart, now - start >= timeout, entry.watch.phase == phase {
                    shutDownBothWays(entry.watch.socket)
                    entry.shutDown = true
                }
                entries.values[index] = entry
            }
        }
    }

    /// When a later request on a keep-alive connection started, or nil while none has: the last
    /// byte the kernel received, if it came after the sweeper first saw the connection waiting
    /// (by more than `tcpi_last_data_recv`'s jiffy granularity, so a byte of the previous request
    /// is not taken for one of this). Without `TCP_INFO`: the moment the wait was first seen.
    private static func requestStart(of entry: Entry, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        let milliseconds = httpserver_tcp_ms_since_data_received(entry.watch.socket)
        guard milliseconds >= 0 else { return entry.phaseSeenAt }
        let lastData = now - .milliseconds(milliseconds)
        return lastData > entry.phaseSeenAt + .milliseconds(20) ? lastData : nil
    }
}

/// libmicrohttpd's `MHD_NotifyConnectionCallback` (`MHD_OPTION_NOTIFY_CONNECTION`), installed only
/// (request deadlines are always on: `headerTimeoutSeconds` is at least 1).
///
/// Thread: the libmicrohttpd thread that accepts (`STARTED`) or cleans up (`CLOSED`) the connection.
/// Protocol: at `STARTED`, a retained ``ConnectionWatch`` goes into `*socketContext` and is
/// registered with the sweeper; at `CLOSED` (called before libmicrohttpd closes the socket) it is
/// unregistered and released. `cls` is the ``ServerContext``.
func mhdNotifyConnection(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ event: MHD_ConnectionNotificationCode
) {
    guard let cls, let connection, let socketContext else { return }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    let sweeper = context.requestDeadlines
    switch event {
    case .CONNECTION_NOTIFY_STARTED:
        context.openConnections.add(1, to: 0)
        let socket = httpserver_mhd_connection_fd(connection)
        guard socket >= 0 else { return }  // no descriptor to shut down: no deadline
        let watch = ConnectionWatch(socket: socket, acceptedAt: .now)
        sweeper.register(watch)
        socketContext.pointee = Unmanaged.passRetained(watch).toOpaque()
    case .CONNECTION_NOTIFY_CLOSED:
        context.openConnections.add(-1, to: 0)
        guard let stored = socketContext.pointee else { return }
        socketContext.pointee = nil
        let watch = Unmanaged<ConnectionWatch>.fromOpaque(stored)
        // The invariant the sweeper's shutdown(2) relies on: the socket is still open here.
        assert(fcntl(watch.takeUnretainedValue().socket, F_GETFD) != -1, "NOTIFY_CLOSED after the socket was closed")
        sweeper.unregister(watch.takeUnretainedValue())
        watch.release()
    default:
        break
    }
}

/// The hot-path steps, each `MHD_get_connection_info(SOCKET_CONTEXT)` and a relaxed load and store
/// on a watch only this connection's thread writes (its retain/release stays on that thread's core).
extension ServerContext {
    /// The first access-handler call of a request: its headers are complete (its header deadline
    /// is met); `bodyFollows`: its body is still to arrive (and now has a deadline of its own).
    func headersCompleted(on connection: OpaquePointer, bodyFollows: Bool) {
        guard let stored = httpserver_mhd_socket_context(connection) else { return }
        Unmanaged<ConnectionWatch>.fromOpaque(stored).takeUnretainedValue().headersCompleted(bodyFollows: bodyFollows)
    }

    /// The final access-handler call of a request with a body: its body deadline is met.
    func bodyReceived(on connection: OpaquePointer) {
        guard let stored = httpserver_mhd_socket_context(connection) else { return }
        Unmanaged<ConnectionWatch>.fromOpaque(stored).takeUnretainedValue().bodyReceived()
    }

    /// The request-completed callback: the connection now waits for its next request.
    func requestCompleted(on connection: OpaquePointer?) {
        guard let connection, let stored = httpserver_mhd_socket_context(connection) else { return }
        Unmanaged<ConnectionWatch>.fromOpaque(stored).takeUnretainedValue().requestCompleted()
    }
}
