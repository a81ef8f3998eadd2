import CMicroHTTPD
import HTTPCore
import ShardedCounters
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A running HTTP/1.1 server: a thin owner of one libmicrohttpd daemon.
///
/// It turns each request into an ``HTTPRequest``, calls `handler` (on libmicrohttpd's threads,
/// concurrently) and sends the ``HTTPResponse`` it returns. Framing problems never reach `handler`:
/// they go to `rejection` (see ``HTTPRejection``). It knows nothing about routes or payload formats.
///
/// Invariant: between `init` and the end of the first ``shutdown(gracePeriod:)`` (or `deinit`)
/// exactly one daemon is listening on ``port``; afterwards none is, and the handler closures have
/// been released. `HTTPServer` is `Sendable` because its only mutable state (the daemon handle)
/// sits behind a `Mutex`.
package final class HTTPServer: Sendable {
    /// The daemon and the retained callback context; only ever touched while `running` is locked.
    private struct RunningDaemon {
        let daemon: OpaquePointer
        let context: Unmanaged<ServerContext>
    }

    private let running: Mutex<RunningDaemon?>

    /// The port the server really listens on (also when the configuration asked for port 0),
    /// read with `MHD_get_daemon_info(MHD_DAEMON_INFO_BIND_PORT)` right after start.
    package let port: Int

    /// Starts listening at once (`MHD_start_daemon` through the shim's `httpserver_mhd_start`).
    ///
    /// - `handler` is called on libmicrohttpd's threads, concurrently, once per well-framed request,
    ///   after the whole body has arrived. It must not call ``shutdown(gracePeriod:)`` itself (that
    ///   would wait for its own request and then join its own thread).
    /// - `rejection` is called, instead of `handler`, for an ``HTTPRejection``; its response goes
    ///   out with `Connection: close`.
    ///
    /// The daemon runs with `MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC` (never epoll), binds the
    /// configured address via `MHD_OPTION_SOCK_ADDR`, and sets `MHD_OPTION_CONNECTION_LIMIT`,
    /// `MHD_OPTION_PER_IP_CONNECTION_LIMIT`, `MHD_OPTION_CONNECTION_TIMEOUT`,
    /// `MHD_OPTION_CONNECTION_MEMORY_LIMIT`, `MHD_OPTION_LISTEN_BACKLOG_SIZE`,
    /// `MHD_OPTION_STRICT_FOR_CLIENT` = 0 (the wrapper checks `Host` and the target itself),
    /// `MHD_OPTION_URI_LOG_CALLBACK` (``mhdCheckRequestTarget``) and, when `threads > 1`,
    /// `MHD_OPTION_THREAD_POOL_SIZE`. It also sets
    /// `MHD_OPTION_NOTIFY_CONNECTION` and starts a ``RequestDeadlineSweeper`` (libmicrohttpd's own
    /// timeout restarts at every byte, so it cannot bound a trickled request or body). The first server
    /// started also sets `SIGPIPE` to ignored.
    package convenience init(
        configuration: HTTPServerConfiguration,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        rejection: @escaping @Sendable (HTTPRejection) -> HTTPResponse
    ) throws(HTTPServerError) {
        try self.init(configuration: configuration, replying: { .response(handler($0)) }, rejection: rejection)
    }

    /// Starts listening at once, as ``init(configuration:handler:rejection:)`` does, with a handler
    /// that may answer a ``DeferredResponse``: its connection is then suspended (its thread serves
    /// other connections) until the response is ready, and the response is made and sent on that
    /// connection's thread.
    package init(
        configuration: HTTPServerConfiguration,
        replying handler: @escaping @Sendable (HTTPRequest) -> HTTPReply,
        rejection: @escaping @Sendable (HTTPRejection) -> HTTPResponse
    ) throws(HTTPServerError) {
        try configuration.validate()
        let address = try BindAddress(host: configuration.host, port: configuration.port)
        ignoreSIGPIPEOnce()

        // Always made: `headerTimeoutSeconds` is at least 1 (``HTTPServerConfiguration/ValidRange``).
        let requestDeadlines = RequestDeadlineSweeper(timeout: .seconds(configuration.headerTimeoutSeconds))
        guard
            let streamSockets = StreamSockets(
                loops: configuration.threads, limitPerAddress: configuration.perIPConnectionLimit)
        else {
            throw .cannotStart(
                host: configuration.host, port: configuration.port,
                reason: "no epoll, eventfd or thread for streamed responses: \(String(cString: strerror(errno)))")
        }
        let context = Unmanaged.passRetained(
            ServerContext(
                handler: handler, rejection: rejection, maxBodyBytes: configuration.maxBodyBytes,
                stoppingResponse: configuration.stoppingResponse, requestDeadlines: requestDeadlines,
                streamSockets: streamSockets,
                gatherResumesAbove: configuration.gatherResumesAbove))
        let contextPointer = context.toOpaque()
        connectionCount = context.takeUnretainedValue().openConnections
        self.streamSockets = streamSockets

        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: configuration.connectionLimit, ptr_value: nil),
            MHD_OptionItem(
                option: .PER_IP_CONNECTION_LIMIT, value: configuration.perIPConnectionLimit, ptr_value: nil),
            MHD_OptionItem(
                option: .CONNECTION_TIMEOUT, value: configuration.connectionTimeoutSeconds, ptr_value: nil),
            MHD_OptionItem(
                option: .CONNECTION_MEMORY_LIMIT, value: configuration.connectionMemoryLimit, ptr_value: nil),
            MHD_OptionItem(option: .LISTEN_BACKLOG_SIZE, value: configuration.listenBacklog, ptr_value: nil),
            // 0, not 1: at 1 libmicrohttpd answers a missing Host with its own HTML 400 and closes
            // on whitespace in the target without a word; at 0 both reach us (``Framing``,
            // ``mhdCheckRequestTarget``), which answer JSON.
            MHD_OptionItem(option: .STRICT_FOR_CLIENT, value: 0, ptr_value: nil)
        ]
        if configuration.threads > 1 {
            options.append(
                MHD_OptionItem(option: .THREAD_POOL_SIZE, value: configuration.threads, ptr_value: nil))
        }
        options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))

        errno = 0  // so a failed start reports its own OS error, not a stale one
        let started: OpaquePointer? = address.withSockAddr { socketAddress in
            options.withUnsafeBufferPointer { optionItems in
                httpserver_mhd_start(
                    address.mode,
                    UInt16(configuration.port),
                    mhdLogMessage, contextPointer,
                    mhdAccessHandler, contextPointer,
                    mhdRequestCompleted, contextPointer,
                    mhdNotifyConnection, contextPointer,
                    mhdCheckRequestTarget, contextPointer,
                    socketAddress,
                    optionItems.baseAddress)
            }
        }
        let startErrno = errno
        let messages = context.takeUnretainedValue().finishStartupLog()

        guard let daemon = started else {
            context.release()  // no daemon, so no callback can run any more
            streamSockets.stop(by: .now)
            var reason = messages.joined(separator: "; ")
            if startErrno != 0 {
                let osError = String(cString: strerror(startErrno))
                if !reason.contains(osError) {
                    reason += reason.isEmpty ? osError : " (last OS error: \(osError))"
                }
            }
            throw .cannotStart(
                host: configuration.host, port: configuration.port,
                reason: reason.isEmpty ? "libmicrohttpd gave no reason" : reason)
        }

        let boundPort = Int(httpserver_mhd_bound_port(daemon))
        if boundPort <= 0 && configuration.port == 0 {
            MHD_stop_daemon(daemon)
            context.release()
            streamSockets.stop(by: .now)
            throw .cannotStart(
                host: configuration.host, port: configuration.port,
                reason: "libmicrohttpd did not report the port it bound (MHD_DAEMON_INFO_BIND_PORT)")
        }
        self.port = boundPort > 0 ? boundPort : configuration.port
        requestDeadlines.start()
        self.running = Mutex(RunningDaemon(daemon: daemon, context: context))
    }

    /// Stops the server gracefully; safe to call more than once and from several threads (later
    /// calls return once the first has finished).
    ///
    /// 1. `MHD_quiesce_daemon`: stop accepting; the listening socket is also shut down
    ///    (`shutdown(2)`) so new clients are refused at once instead of waiting in the backlog.
    ///    Connections already open are still served (quiescing only removes the listening socket).
    /// 2. Every response from now on carries `Connection: close`.
    /// 3. Wait, polling every 5 ms, until no request is in flight (begun but not completely sent)
    ///    and no stream is open (its producer ends it), or `gracePeriod` has passed. Idle
    ///    keep-alive connections are not waited for.
    /// 4. Close the waits: from now on a request is answered ``HTTPRejection/serverStopping``
    ///    without reaching the handler, a ``DeferredResponse`` never suspends its connection, and
    ///    requests still waiting for one get ``HTTPServerConfiguration/stoppingResponse``, their
    ///    connections resumed. This step looks at what waits under the same lock a suspension
    ///    takes, so no connection is suspended after it.
    /// 5. Wait again until no request is in flight, at most `gracePeriod` or 1 s, whichever is
    ///    less: a resumed connection is answered on its thread's next poll round, and
    ///    `MHD_stop_daemon` would close it before that.
    /// 6. Let the streams send what their bodies hold, the end included (step 4 finished them), for
    ///    at most `gracePeriod` or 1 s, then close what is left (``StreamSockets/stop(by:)``).
    /// 7. `MHD_stop_daemon`: libmicrohttpd 0.9.75 aborts the process if it finds a connection
    ///    suspended (step 4 rules that out; a connection whose resume was asked for is taken back
    ///    first), closes every connection and waits for handlers still running. Then stop the
    ///    request-deadline sweeper, close the listening socket and release the handler closures.
    ///
    /// Must not be called from inside `handler` or `rejection`.
    package func shutdown(gracePeriod: Duration = .seconds(5)) {
        running.withLock { running in
            guard let current = running.take() else { return }
            let context = current.context.takeUnretainedValue()

            let listenSocket = MHD_quiesce_daemon(current.daemon)
            if listenSocket != MHD_INVALID_SOCKET {
                shutDownBothWays(listenSocket)  // see MHD_quiesce_daemon's note below
            }
            context.beginDraining()
            waitUntilNothingInFlight(context, atMost: gracePeriod)
            context.closeWaits()
            waitUntilNothingInFlight(context, atMost: min(gracePeriod, .seconds(1)))
            context.streamSockets.stop(by: .now + min(gracePeriod, .seconds(1)))
            MHD_stop_daemon(current.daemon)
            context.requestDeadlines.stop()
            if listenSocket != MHD_INVALID_SOCKET {
                _ = close(listenSocket)
            }
            current.context.release()
        }
    }

    /// Polls every 5 ms until no request is in flight and no stream open, or `period` has passed.
    private func waitUntilNothingInFlight(_ context: ServerContext, atMost period: Duration) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: period)
        while context.inFlight > 0 || context.streamSockets.count > 0, clock.now < deadline {
            usleep(5_000)
        }
    }

    /// Client connections open now, idle keep-alive ones and streams included: libmicrohttpd's
    /// connection notifications counted (started minus closed), and the streams taken over from
    /// it. No lock: a scrape may read it while the server stops.
    package var openConnections: Int { connectionCount.total(of: 0) + streamSockets.count }
    /// The streams' sockets, kept here so counting them needs no daemon.
    private let streamSockets: StreamSockets
    /// The context's count of open connections, kept here so reading it needs no daemon.
    private let connectionCount: ThreadShardedCounters

    /// Requests begun and not yet reported complete by libmicrohttpd; 0 once stopped. For tests.
    var requestsInFlight: Int {
        running.withLock { $0?.context.takeUnretainedValue().inFlight ?? 0 }
    }

    /// Streamed responses admitted and not yet ended; 0 once stopped. For tests.
    var streamsOpen: Int {
        running.withLock { $0?.context.takeUnretainedValue().openStreams ?? 0 }
    }

    /// Resumes sent gathered so far (``HTTPServerConfiguration/gatherResumesAbove``; for tests).
    var gatheredResumes: Int {
        running.withLock { $0?.context.takeUnretainedValue().gatheredResumes ?? 0 }
    }

    /// Stops the server if ``shutdown(gracePeriod:)`` has not: with no grace period, so requests
    /// still in flight are cut off.
    deinit {
        shutdown(gracePeriod: .zero)
    }
}

/// `shutdown(2)` with `SHUT_RDWR`; the descriptor stays open for its owner to close.
///
/// On the quiesced listening socket: libmicrohttpd no longer polls it (and treats `EINVAL` from
/// `accept` as "shutting down"), so on Linux this makes the port refuse new connections during
/// the grace period; elsewhere it is harmless. The descriptor itself is closed only after
/// `MHD_stop_daemon`, as `MHD_quiesce_daemon`'s documentation requires. On a connection's socket
/// (``RequestDeadlineSweeper``): libmicrohttpd sees the stream end and closes the connection.
func shutDownBothWays(_ socket: Int32) {
    #if canImport(Glibc) || canImport(Musl)
    _ = shutdown(socket, Int32(SHUT_RDWR))
    #elseif canImport(Darwin)
    _ = shutdown(socket, SHUT_RDWR)
    #endif
}

/// Sets `SIGPIPE` to ignored exactly once per process (Swift runs a global's initialiser once,
/// thread-safely), so a client that hangs up mid-response cannot kill the process.
private let sigpipeIgnored: Bool = {
    _ = signal(SIGPIPE, SIG_IGN)
    return true
}()

private func ignoreSIGPIPEOnce() {
    _ = sigpipeIgnored
}
