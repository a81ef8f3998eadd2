// Taking a streamed response's connection over from libmicrohttpd (see ``StreamSockets`` for
// why): the response head written here as libmicrohttpd would write it, the socket duplicated,
// libmicrohttpd's descriptor pointed at a placeholder socket, and the access handler answering
// `MHD_NO`, on which libmicrohttpd 0.9.75 closes and frees its side of the connection
// (`connection_close_error`): its `shutdown(SHUT_WR)` and `close` reach the placeholder, never
// the client's socket.
//
// Invariant: on `.taken` the socket belongs to ``StreamSockets`` and libmicrohttpd's descriptor
// number names the placeholder; on any other outcome nothing was duplicated or replaced.

import CMicroHTTPD
import HTTPCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How the request that is answered with a stream was framed: what its answer may be.
struct StreamFraming {
    /// An HTTP/1.0 request: the body goes unchunked and its end is the connection's close.
    var http10 = false
    /// A `HEAD` request: the head only.
    var headOnly = false

    init() {}

    /// From the access handler's `method` and `version`.
    init(method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?) {
        http10 = version.map { strcmp($0, "HTTP/1.0") == 0 } ?? false
        headOnly = method.map { strcmp($0, "HEAD") == 0 } ?? false
    }
}

enum StreamTakeOver {
    /// The socket is the stream loop's: the access handler answers `MHD_NO`.
    case taken
    /// The peer's address holds its limit of streams: answer this rejection instead.
    case refused(HTTPRejection)
    /// The response cannot be written as given.
    case invalid(String)
    /// The system refused a descriptor: close the connection.
    case failed
}

/// Takes `connection`'s socket over for `response`, whose body is `body` (see the file's comment).
func takeOver(
    _ response: HTTPResponse, _ body: StreamedBody, on connection: OpaquePointer, _ framing: StreamFraming,
    _ context: ServerContext
) -> StreamTakeOver {
    if let problem = unsendableStatus(response.status) { return .invalid(problem) }
    let head: [UInt8]
    switch streamHead(status: response.status, headers: response.headers, chunked: !framing.http10) {
    case .success(let bytes): head = bytes
    case .failure(let problem): return .invalid(problem.text)
    }
    let address = peerAddress(of: connection)
    guard context.streamSockets.reserve(for: address) else {
        return .refused(.tooManyStreamsFromAddress(limit: context.streamSockets.limitPerAddress))
    }
    let original = httpserver_mhd_connection_fd(connection)
    let placeholder = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    let own = original >= 0 ? fcntl(original, F_DUPFD_CLOEXEC, 0) : -1
    guard placeholder >= 0, own >= 0, dup2(placeholder, original) >= 0 else {
        if placeholder >= 0 { close(placeholder) }
        if own >= 0 { close(own) }
        context.streamSockets.release(address)
        return .failed
    }
    close(placeholder)
    _ = fcntl(original, F_SETFD, FD_CLOEXEC)  // (a child spawned in between inherits an unconnected socket)
    // libmicrohttpd corks and uncorks around its sends; a stream's events go out as written.
    var on: Int32 = 1
    var off: Int32 = 0
    _ = setsockopt(own, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    _ = setsockopt(own, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size))
    _ = fcntl(own, F_SETFL, fcntl(own, F_GETFL) | O_NONBLOCK)
    let key = ObjectIdentifier(body)
    if framing.headOnly { body.close() }  // the head goes out, then the socket closes
    context.streamSockets.adopt(
        socket: own, head: head, body: body, chunked: !framing.http10, address: address,
        ended: { [context] in context.streamEnded(key) })
    return .taken
}

/// Why a stream's head could not be written.
struct StreamHeadProblem: Error {
    let text: String
}

/// The status line and headers of a streamed response, as libmicrohttpd writes a response's:
/// `Date`, the handler's headers (without `Content-Length`, `Transfer-Encoding` and
/// `Connection`, which are the server's), `Transfer-Encoding: chunked` when `chunked`, and
/// `Connection: close` (the connection ends with the stream).
func streamHead(status: Int, headers: [(name: String, value: String)], chunked: Bool) -> Result<
    [UInt8], StreamHeadProblem
> {
    var head = Array("HTTP/1.1 \(status) ".utf8)
    if let reason = MHD_get_reason_phrase_for(UInt32(status)) {
        head.append(contentsOf: Array(String(cString: reason).utf8))
    }
    head.append(contentsOf: Array("\r\nDate: \(httpDate())\r\n".utf8))
    for header in headers where !header.value.isEmpty {
        if ["content-length", "transfer-encoding", "connection"].contains(where: {
            asciiCaseInsensitiveEquals(header.name, $0)
        }) {
            continue
        }
        let nameIsToken = !header.name.isEmpty && header.name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x3A }
        let valueIsText = header.value.utf8.allSatisfy { $0 != 13 && $0 != 10 && $0 != 0 }
        guard nameIsToken, valueIsText else {
            return .failure(
                StreamHeadProblem(
                    text: "header \(String(reflecting: header.name)) is not valid in HTTP/1.1 "
                        + "(empty name, space, tab, colon, CR, LF or NUL in it)"))
        }
        head.append(contentsOf: Array("\(header.name): \(header.value)\r\n".utf8))
    }
    if chunked { head.append(contentsOf: Array("Transfer-Encoding: chunked\r\n".utf8)) }
    head.append(contentsOf: Array("Connection: close\r\n\r\n".utf8))
    return .success(head)
}

/// Now as an HTTP date (RFC 9110 §5.6.7, IMF-fixdate): `Sun, 06 Nov 1994 08:49:37 GMT`.
func httpDate(_ seconds: time_t = time(nil)) -> String {
    var seconds = seconds
    var parts = tm()
    gmtime_r(&seconds, &parts)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
        + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
}
