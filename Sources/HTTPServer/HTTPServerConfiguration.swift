import HTTPCore

/// Everything ``HTTPServer`` needs to open its listening socket and run libmicrohttpd.
///
/// Invariant: none while you fill it in; ``HTTPServer/init(configuration:handler:rejection:)``
/// checks every field against ``ValidRange`` and throws ``HTTPServerError/invalidConfiguration(setting:value:requirement:)``
/// or ``HTTPServerError/invalidHost(_:)`` naming the first one out of range.
package struct HTTPServerConfiguration: Sendable {
    /// The address to bind: an IPv4 or IPv6 literal (`"0.0.0.0"` and `"::"` allowed, `"[::1]"`
    /// accepted); host names are not resolved. `"::"` listens dual-stack (IPv6 and IPv4).
    package var host: String = "127.0.0.1"
    /// The TCP port, 0...65535; 0 lets the kernel pick a free port (read it back from ``HTTPServer/port``).
    package var port: Int = 8080
    /// libmicrohttpd worker threads (`MHD_OPTION_THREAD_POOL_SIZE` when above 1); 1 = just the internal thread.
    package var threads: Int = 2
    /// The largest request body accepted, in bytes; larger ones get ``HTTPRejection/payloadTooLarge(limit:)``.
    package var maxBodyBytes: Int = 64 * 1024
    /// Open connections at most (`MHD_OPTION_CONNECTION_LIMIT`), shared among the threads.
    package var connectionLimit: Int = 1024
    /// Open connections per client IP at most; 0 = unlimited (`MHD_OPTION_PER_IP_CONNECTION_LIMIT`);
    /// libmicrohttpd closes a connection past it at once. 128 lets one address (a browser uses 6, a
    /// NAT or a load generator a few dozen) hold an eighth of the default `connectionLimit` at most.
    package var perIPConnectionLimit: Int = 128
    /// Seconds of inactivity before a connection is closed (`MHD_OPTION_CONNECTION_TIMEOUT`).
    package var connectionTimeoutSeconds: Int = 30
    /// Seconds a request's line and headers may take, and then its body, however slowly they
    /// trickle in. The headers' time counts from the connection's accept for its
    /// first request, from the first bytes after the previous response for a later one; the body's
    /// from its headers (``RequestDeadlineSweeper``).
    package var headerTimeoutSeconds: Int = 10
    /// Bytes of memory per connection, which bounds the request line plus headers
    /// (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`); requests whose headers do not fit get libmicrohttpd's 431.
    package var connectionMemoryLimit: Int = 32 * 1024
    /// Pending-connection queue length of the listening socket (`MHD_OPTION_LISTEN_BACKLOG_SIZE`).
    package var listenBacklog: Int = 511
    /// Suspended connections (waits and parked streams) above which resumes are gathered, each
    /// sent within 2 ms together with those asked meanwhile: libmicrohttpd walks every suspended
    /// connection of a thread whenever it resumes any (``ServerContext/resume(_:then:)``).
    package var gatherResumesAbove: Int = 256

    /// The answer to a request still waiting for a ``DeferredResponse`` when the server stops
    /// (``HTTPServer/shutdown(gracePeriod:)``, after the grace period); the deferred response's
    /// own transforms are applied to it. Requests that arrive later get ``HTTPRejection/serverStopping``.
    package var stoppingResponse = HTTPResponse(
        status: 503,
        headers: [(name: "Content-Type", value: "text/plain; charset=utf-8"), (name: "Retry-After", value: "1")],
        body: Array("The server is stopping; retry.\n".utf8))

    /// The defaults shown on each property: the one source of each default (the application's
    /// settings start from this value).
    package init() {}

    /// The values each integer field accepts: ``HTTPServer`` refuses one outside its range, and
    /// an application's flags take their bounds from here (one source for both).
    package enum ValidRange {
        package static let port = 0 ... 65_535
        /// Each libmicrohttpd thread is a poll loop with its own stack and wake-up pipe; far more
        /// than the cores (2 served best on 2 cores, docs/performance.md) buys nothing.
        package static let threads = 1 ... 256
        package static let connectionLimit = 1 ... 1_000_000
        /// 0 = unlimited.
        package static let perIPConnectionLimit = 0 ... 1_000_000
        /// From 1: a connection that never times out lets idle clients hold every slot.
        package static let connectionTimeoutSeconds = 1 ... 86_400
        /// From 1: without a deadline a client trickling its headers holds its connection forever.
        package static let headerTimeoutSeconds = 1 ... 86_400
        /// It must hold the request line, the headers and libmicrohttpd's buffers.
        package static let connectionMemoryLimit = 4096 ... 1 << 24
        package static let listenBacklog = 1 ... 65_535
        package static let gatherResumesAbove = 0 ... 1_000_000
    }

    /// Throws for the first field out of range.
    func validate() throws(HTTPServerError) {
        func require(_ range: ClosedRange<Int>, _ value: Int, _ setting: String, _ note: String = "")
            throws(HTTPServerError)
        {
            if !range.contains(value) {
                throw .invalidConfiguration(
                    setting: setting, value: value, requirement: "\(range.lowerBound)...\(range.upperBound)" + note)
            }
        }
        try require(ValidRange.port, port, "port", " (0 picks a free port)")
        try require(ValidRange.threads, threads, "threads")
        if maxBodyBytes < 0 {
            throw .invalidConfiguration(setting: "maxBodyBytes", value: maxBodyBytes, requirement: "0 or more")
        }
        try require(ValidRange.connectionLimit, connectionLimit, "connectionLimit")
        if connectionLimit < threads {
            throw .invalidConfiguration(
                setting: "connectionLimit", value: connectionLimit,
                requirement: "at least `threads` (\(threads)): libmicrohttpd gives each thread a share of the limit")
        }
        try require(ValidRange.perIPConnectionLimit, perIPConnectionLimit, "perIPConnectionLimit", " (0 = unlimited)")
        try require(ValidRange.connectionTimeoutSeconds, connectionTimeoutSeconds, "connectionTimeoutSeconds")
        try require(ValidRange.headerTimeoutSeconds, headerTimeoutSeconds, "headerTimeoutSeconds")
        try require(
            ValidRange.connectionMemoryLimit, connectionMemoryLimit, "connectionMemoryLimit",
            " bytes (it must hold the request line and headers)")
        try require(ValidRange.listenBacklog, listenBacklog, "listenBacklog")
        try require(ValidRange.gatherResumesAbove, gatherResumesAbove, "gatherResumesAbove")
    }
}

/// Why an ``HTTPServer`` could not be created.
///
/// Invariant: ``description`` always says what to change.
package enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    /// `host` is not an IPv4 or IPv6 literal.
    case invalidHost(String)
    /// A configuration field is out of range; `requirement` states the valid range.
    case invalidConfiguration(setting: String, value: Int, requirement: String)
    /// libmicrohttpd did not start (`MHD_start_daemon` returned NULL), e.g. the port is taken;
    /// `reason` carries libmicrohttpd's own messages and the last OS error.
    case cannotStart(host: String, port: Int, reason: String)

    /// A one-line, actionable explanation (what was wrong and what to change).
    package var description: String {
        switch self {
        case .invalidHost(let host):
            return "invalid host \"\(host)\": give an IPv4 or IPv6 address literal such as "
                + "127.0.0.1, 0.0.0.0, ::1 or :: (host names are not resolved)"
        case .invalidConfiguration(let setting, let value, let requirement):
            return "invalid HTTP server setting \(setting) = \(value): it must be \(requirement)"
        case .cannotStart(let host, let port, let reason):
            let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            return "cannot start the HTTP server on \(address): \(reason). "
                + "Check that no other process listens on that port (or use port 0), "
                + "that the address belongs to this machine, and that ports below 1024 have the needed privilege"
        }
    }
}
