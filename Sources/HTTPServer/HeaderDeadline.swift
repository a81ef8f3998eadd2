// The header deadline: a request's line and headers must be complete within
// `HTTPServerConfiguration.headerTimeoutSeconds`, however slowly their bytes trickle in.
// libmicrohttpd 0.9.75 has no such deadline (its connection timeout restarts at every byte) and
// calls the access handler only once the headers are complete, so the deadline is kept here: a
// watch per connection (`MHD_OPTION_NOTIFY_CONNECTION`) and a sweeper that shuts slow ones down.

import CMicroHTTPD
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One TCP connection's progress through its requests, shared by the libmicrohttpd thread that
/// owns the connection (the only writer) and the ``HeaderDeadlineSweeper`` (a reader).
///
/// Invariant: created and retained into the connection's `socket_context` at
/// `MHD_CONNECTION_NOTIFY_STARTED`, released at `MHD_CONNECTION_NOTIFY_CLOSED`. ``phase`` is even
/// while the connection waits for a request's line and headers and odd from the first
/// access-handler call of a request until its response has been sent; it only counts up, one step
/// at a time, so every new wait shows the sweeper a new even value.
///
/// Cost on the hot path: per request, one relaxed atomic load and store when its headers are
/// complete and again when it completes, each after one `MHD_get_connection_info` call.
final class ConnectionWatch: Sendable {
    /// The connection's socket, read once at `MHD_CONNECTION_NOTIFY_STARTED`.
    let socket: Int32
    /// When libmicrohttpd accepted the connection: the start of its first request.
    let acceptedAt: ContinuousClock.Instant
    private let phaseCounter = Atomic<Int>(0)

    init(socket: Int32, acceptedAt: ContinuousClock.Instant) {
        self.socket = socket
        self.acceptedAt = acceptedAt
    }

    /// 2 × requests completed, plus 1 while a request with complete headers is being answered.
    var phase: Int { phaseCounter.load(ordering: .relaxed) }

    /// The first access-handler call of a request: its headers are complete.
    func headersCompleted() {
        let phase = phaseCounter.load(ordering: .relaxed)
        if phase & 1 == 0 { phaseCounter.store(phase + 1, ordering: .relaxed) }
    }

    /// libmicrohttpd reported the request completed: the connection waits for its next request.
    func requestCompleted() {
        let phase = phaseCounter.load(ordering: .relaxed)
        if phase & 1 == 1 { phaseCounter.store(phase + 1, ordering: .relaxed) }
    }
}

/// Shuts down every connection whose current request has not got its line and headers complete
/// within ``timeout`` of its start, whatever it keeps sending meanwhile.
///
/// A request starts
/// - for the first request of a connection: when libmicrohttpd accepted the connection;
/// - for a later request on a keep-alive connection: when its bytes start arriving after the
///   previous response was sent (the sweeper notices the kernel's `tcpi_last_data_recv` moving
///   past the moment it first saw the connection waiting; without `TCP_INFO`, outside Linux, the
///   request counts from that moment itself). A keep-alive connection idle between requests is
///   left to libmicrohttpd's connection timeout.
/// Bytes arriving never move a deadline; only the headers completing (``ConnectionWatch/phase``
/// turning odd) ends it. A request is shut down between `timeout` and `timeout` + ``interval``
/// after its start (for a later keep-alive request, after the sweep that noticed its bytes).
///
/// Shutting down is `shutdown(2)` with `SHUT_RDWR` on the connection's socket: libmicrohttpd's poll
/// then sees the stream end and closes the connection its own way (per-IP count, callbacks,
/// memory), exactly as if the client had hung up. The client gets no answer (its request never
/// reached the handler); a shut-down request whose headers complete in the same instant is lost.
///
/// Invariant: ``entries`` holds exactly the watches of open connections, and `shutdown(2)` is only
/// called under its lock for a registered watch. libmicrohttpd calls `NOTIFY_CLOSED` (which takes
/// the lock to unregister) before it closes the socket, so the descriptor is never one that was
/// closed and perhaps reused.
///
/// Cost: one sweep every ``interval`` on its own queue, O(open connections) under the lock, plus
/// one `getsockopt(TCP_INFO)` per keep-alive connection waiting for its next request. The lock is
/// otherwise taken once when a connection opens and once when it closes, never per request.
final class HeaderDeadlineSweeper: Sendable {
    /// How the sweeper sees one connection; only touched under the lock.
    private struct Entry {
        let watch: ConnectionWatch
        /// The phase of the wait being timed (even).
        var timedPhase = 0
        /// When the sweeper first saw the current wait (for a keep-alive connection's later request).
        var waitSeenAt: ContinuousClock.Instant
        /// When the current request started, once known.
        var requestStart: ContinuousClock.Instant?
        /// `shutdown(2)` has been called; libmicrohttpd has yet to close the connection.
        var shutDown = false
    }

    /// How long a request's line and headers may take.
    let timeout: Duration
    /// Time between two sweeps.
    let interval: Duration = .milliseconds(250)
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)
    private let queue = DispatchQueue(label: "HTTPServer.HeaderDeadlineSweeper")

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
        let entry = Entry(watch: watch, waitSeenAt: watch.acceptedAt, requestStart: watch.acceptedAt)
        entries.withLock { $0[ObjectIdentifier(watch)] = entry }
    }

    /// `MHD_CONNECTION_NOTIFY_CLOSED`, before libmicrohttpd closes the socket.
    func unregister(_ watch: ConnectionWatch) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(watch)) }
    }

    /// Connections shut down for their header deadline so far (for tests and figures).
    var shutDownCount: Int { shutDowns.load(ordering: .relaxed) }
    private let shutDowns = Atomic<Int>(0)

    /// One sweep: shuts down every waiting connection past its deadline at `now`.
    func sweep(now: ContinuousClock.Instant) {
        entries.withLock { entries in
            for index in entries.values.indices {
                var entry = entries.values[index]
                let phase = entry.watch.phase
                guard !entry.shutDown, phase & 1 == 0 else { continue }
                if phase != entry.timedPhase {  // the previous response went out: a new wait
                    entry.timedPhase = phase
                    entry.waitSeenAt = now
                    entry.requestStart = nil
                }
                if entry.requestStart == nil {
                    entry.requestStart = Self.requestStart(of: entry, now: now)
                }
                if let start = entry.requestStart, now - start >= timeout, entry.watch.phase == phase {
                    shutDownBothWays(entry.watch.socket)
                    entry.shutDown = true
                    shutDowns.add(1, ordering: .relaxed)
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
        let milliseconds = menu_tcp_ms_since_data_received(entry.watch.socket)
        guard milliseconds >= 0 else { return entry.waitSeenAt }
        let lastData = now - .milliseconds(milliseconds)
        return lastData > entry.waitSeenAt + .milliseconds(20) ? lastData : nil
    }
}

/// libmicrohttpd's `MHD_NotifyConnectionCallback` (`MHD_OPTION_NOTIFY_CONNECTION`), installed only
/// when a header deadline is configured.
///
/// Thread: the libmicrohttpd thread that accepts (`STARTED`) or cleans up (`CLOSED`) the connection.
/// Protocol: at `STARTED`, a retained ``ConnectionWatch`` goes into `*socketContext` and is
/// registered with the sweeper; at `CLOSED` (called before libmicrohttpd closes the socket) it is
/// unregistered and released. `cls` is the ``ServerContext``.
func menuNotifyConnection(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ event: MHD_ConnectionNotificationCode
) {
    guard let cls, let connection, let socketContext,
        let sweeper = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().headerDeadline
    else { return }
    switch event {
    case .CONNECTION_NOTIFY_STARTED:
        let socket = menu_mhd_connection_fd(connection)
        guard socket >= 0 else { return }  // no descriptor to shut down: no deadline
        let watch = ConnectionWatch(socket: socket, acceptedAt: .now)
        sweeper.register(watch)
        socketContext.pointee = Unmanaged.passRetained(watch).toOpaque()
    case .CONNECTION_NOTIFY_CLOSED:
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

extension ServerContext {
    /// The first access-handler call of a request: its headers are complete, its deadline is met.
    func headersCompleted(on connection: OpaquePointer) {
        guard headerDeadline != nil, let stored = menu_mhd_socket_context(connection) else { return }
        Unmanaged<ConnectionWatch>.fromOpaque(stored)._withUnsafeGuaranteedRef { $0.headersCompleted() }
    }

    /// The request-completed callback: the connection now waits for its next request.
    func requestCompleted(on connection: OpaquePointer?) {
        guard headerDeadline != nil, let connection, let stored = menu_mhd_socket_context(connection) else { return }
        Unmanaged<ConnectionWatch>.fromOpaque(stored)._withUnsafeGuaranteedRef { $0.requestCompleted() }
    }
}
