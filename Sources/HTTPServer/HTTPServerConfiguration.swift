/// Everything ``HTTPServer`` needs to open its listening socket and run libmicrohttpd.
///
/// Invariant: none while you fill it in; ``HTTPServer/init(configuration:handler:rejection:)``
/// checks every field and throws ``HTTPServerError/invalidConfiguration(setting:value:requirement:)``
/// or ``HTTPServerError/invalidHost(_:)`` naming the first one out of range.
public struct HTTPServerConfiguration: Sendable {
    /// The address to bind: an IPv4 or IPv6 literal (`"0.0.0.0"` and `"::"` allowed, `"[::1]"`
    /// accepted); host names are not resolved. `"::"` listens dual-stack (IPv6 and IPv4).
    public var host: String = "127.0.0.1"
    /// The TCP port, 0...65535; 0 lets the kernel pick a free port (read it back from ``HTTPServer/port``).
    public var port: Int = 8080
    /// libmicrohttpd worker threads (`MHD_OPTION_THREAD_POOL_SIZE` when above 1); 1 = just the internal thread.
    public var threads: Int = 2
    /// The largest request body accepted, in bytes; larger ones get ``HTTPRejection/payloadTooLarge(limit:)``.
    public var maxBodyBytes: Int = 64 * 1024
    /// Open connections at most (`MHD_OPTION_CONNECTION_LIMIT`), shared among the threads.
    public var connectionLimit: Int = 1024
    /// Open connections per client IP at most; 0 = unlimited (`MHD_OPTION_PER_IP_CONNECTION_LIMIT`);
    /// libmicrohttpd closes a connection past it at once. 128 lets one address (a browser uses 6, a
    /// NAT or a load generator a few dozen) hold an eighth of the default `connectionLimit` at most.
    public var perIPConnectionLimit: Int = 128
    /// Seconds of inactivity before a connection is closed; 0 = never (`MHD_OPTION_CONNECTION_TIMEOUT`).
    public var connectionTimeoutSeconds: Int = 30
    /// Seconds a request's line and headers may take, and then its body, however slowly they
    /// trickle in; 0 = no deadline. The headers' time counts from the connection's accept for its
    /// first request, from the first bytes after the previous response for a later one; the body's
    /// from its headers (``RequestDeadlineSweeper``).
    public var headerTimeoutSeconds: Int = 10
    /// Bytes of memory per connection, which bounds the request line plus headers
    /// (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`); requests whose headers do not fit get libmicrohttpd's 431.
    public var connectionMemoryLimit: Int = 32 * 1024
    /// Pending-connection queue length of the listening socket (`MHD_OPTION_LISTEN_BACKLOG_SIZE`).
    public var listenBacklog: Int = 511

    /// The defaults shown on each property.
    public init() {}

    /// Throws for the first field out of range.
    func validate() throws(HTTPServerError) {
        func require(_ ok: Bool, _ setting: String, _ value: Int, _ requirement: String) throws(HTTPServerError) {
            if !ok { throw .invalidConfiguration(setting: setting, value: value, requirement: requirement) }
        }
        let uintMax = Int(UInt32.max)
        try require((0...65_535).contains(port), "port", port, "0...65535 (0 picks a free port)")
        try require((1...1024).contains(threads), "threads", threads, "1...1024")
        try require(maxBodyBytes >= 0, "maxBodyBytes", maxBodyBytes, "0 or more")
        try require((1...uintMax).contains(connectionLimit), "connectionLimit", connectionLimit, "1...\(uintMax)")
        try require(
            connectionLimit >= threads, "connectionLimit", connectionLimit,
            "at least `threads` (\(threads)): libmicrohttpd gives each thread a share of the limit")
        try require(
            (0...uintMax).contains(perIPConnectionLimit), "perIPConnectionLimit", perIPConnectionLimit,
            "0...\(uintMax) (0 = unlimited)")
        try require(
            (0...uintMax).contains(connectionTimeoutSeconds), "connectionTimeoutSeconds",
            connectionTimeoutSeconds, "0...\(uintMax) (0 = no timeout)")
        try require(
            (0...86_400).contains(headerTimeoutSeconds), "headerTimeoutSeconds", headerTimeoutSeconds,
            "0...86400 (0 = no deadline)")
        try require(
            (2048...(1 << 30)).contains(connectionMemoryLimit), "connectionMemoryLimit",
            connectionMemoryLimit, "2048...\(1 << 30) bytes (it must hold the request line and headers)")
        try require((1...65_535).contains(listenBacklog), "listenBacklog", listenBacklog, "1...65535")
    }
}

/// Why an ``HTTPServer`` could not be created.
///
/// Invariant: ``description`` always says what to change.
public enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    /// `host` is not an IPv4 or IPv6 literal.
    case invalidHost(String)
    /// A configuration field is out of range; `requirement` states the valid range.
    case invalidConfiguration(setting: String, value: Int, requirement: String)
    /// libmicrohttpd did not start (`MHD_start_daemon` returned NULL), e.g. the port is taken;
    /// `reason` carries libmicrohttpd's own messages and the last OS error.
    case cannotStart(host: String, port: Int, reason: String)

    /// A one-line, actionable explanation (what was wrong and what to change).
    public var description: String {
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
