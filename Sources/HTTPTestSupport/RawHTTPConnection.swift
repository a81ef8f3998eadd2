// A tiny blocking HTTP/1.1 client over a POSIX TCP socket, shared by the test targets, so tests
// can send exact bytes (duplicate headers, chunked bodies, several requests on one connection,
// hostile input) and see exact bytes back. Depends on nothing but Foundation and the C library.

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a raw connection failed. The associated `Int32` values are `errno` codes.
package enum RawHTTPError: Error, Equatable, CustomStringConvertible {
    case socket(Int32)
    case connect(Int32)
    case send(Int32)
    case receive(Int32)
    case closedBeforeResponseEnded
    case malformed(String)

    package var description: String {
        switch self {
        case .socket(let code): "socket: errno \(code)"
        case .connect(let code): "connect: errno \(code)"
        case .send(let code): "send: errno \(code)"
        case .receive(let code): code == EAGAIN || code == EWOULDBLOCK ? "receive timed out" : "recv: errno \(code)"
        case .closedBeforeResponseEnded: "connection closed before the response ended"
        case .malformed(let text): "malformed response: \(text)"
        }
    }
}

/// One parsed HTTP response.
package struct RawHTTPResponse: Sendable, CustomStringConvertible {
    /// The status code of the status line.
    package var status: Int
    /// The header fields in the order received, names as sent.
    package var headers: [(name: String, value: String)]
    /// The body, de-chunked when the response was chunked.
    package var body: [UInt8]
    /// The status line and header lines as received, each ending in CRLF.
    package var head: String

    package init(status: Int, headers: [(name: String, value: String)], body: [UInt8], head: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.head = head
    }

    /// The protocol version of the status line, e.g. `HTTP/1.1`.
    package var version: String { String(head.prefix { $0 != " " }) }

    /// The first value of the header `name` (case-insensitive), if any.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body decoded as UTF-8.
    package var bodyText: String { String(decoding: body, as: UTF8.self) }

    package var description: String { "\(status) \(headers.map { "\($0.name): \($0.value)" }) \(bodyText.prefix(300))" }
}

/// One client TCP connection, by default to 127.0.0.1. Not thread-safe: one thread at a time uses it.
package final class RawHTTPConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// The server's port.
    package let port: Int
    /// The server's IPv4 address.
    package let host: String

    /// Connects, with a receive timeout (and optionally a send timeout) so a broken server fails
    /// the test instead of hanging it. `sourceHost` binds the client's own end first (e.g.
    /// `127.0.0.2`, to be another client address on loopback); nil lets the kernel choose.
    package init(
        port: Int, host: String = "127.0.0.1", sourceHost: String? = nil, receiveTimeoutSeconds: Int = 10,
        sendTimeoutSeconds: Int? = nil
    ) throws {
        self.port = port
        self.host = host
        // The socket is `self.fd` only once connected: a throw after every stored property is set
        // runs `deinit`, which would close it a second time, and the number may by then be another
        // thread's descriptor (a server's wake-up channel; libmicrohttpd aborts when it finds it
        // closed).
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError.socket(errno) }
        Self.setTimeout(fd, SO_RCVTIMEO, seconds: receiveTimeoutSeconds)
        if let sendTimeoutSeconds { Self.setTimeout(fd, SO_SNDTIMEO, seconds: sendTimeoutSeconds) }
        if let sourceHost {
            var source = Self.address(sourceHost, port: 0)
            let bound = withUnsafePointer(to: &source) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if bound != 0 {
                let code = errno
                close(fd)
                throw RawHTTPError.connect(code)
            }
        }
        let result = Self.connectSocket(fd, port: port, host: host)
        if result != 0 {
            close(fd)
            throw RawHTTPError.connect(result)
        }
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    private static func setTimeout(_ fd: Int32, _ option: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// 0 on success, else the `errno` of `connect(2)` (e.g. `ECONNREFUSED`).
    package static func connectSocket(_ fd: Int32, port: Int, host: String = "127.0.0.1") -> Int32 {
        var address = address(host, port: port)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return rc == 0 ? 0 : errno
    }

    /// The IPv4 socket address `host:port`.
    private static func address(_ host: String, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        _ = inet_pton(AF_INET, host, &address.sin_addr)
        return address
    }

    /// A new blocking TCP socket connected to `host:port`; the caller owns it and must `close` it.
    package static func connectedSocket(port: Int, host: String = "127.0.0.1") throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError.socket(errno) }
        let result = connectSocket(fd, port: port, host: host)
        if result != 0 {
            close(fd)
            throw RawHTTPError.connect(result)
        }
        return fd
    }

    /// The `errno` a fresh connection attempt to `port` fails with, or 0 if it connects.
    package static func connectErrno(port: Int, host: String = "127.0.0.1") -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return connectSocket(fd, port: port, host: host)
    }

    /// Writes all of `bytes`, retrying on `EINTR`.
    package func sendBytes(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                throw RawHTTPError.send(errno)
            }
            offset += sent
        }
    }

    /// Writes `text` as UTF-8.
    package func sendText(_ text: String) throws {
        try sendBytes(Array(text.utf8))
    }

    /// Sends one request with `Host` and, when there is a body or the method is PUT or POST,
    /// `Content-Length`.
    package func sendRequest(
        _ method: String, _ target: String, headers: [(String, String)] = [],
        body: [UInt8] = []
    ) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "PUT" || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try sendBytes(Array(head.utf8) + body)
    }

    /// Sends one request (see `sendRequest`) and reads its response.
    package func request(
        _ method: String, _ target: String, headers: [(String, String)] = [],
        body: [UInt8] = []
    ) throws -> RawHTTPResponse {
        try sendRequest(method, target, headers: headers, body: body)
        return try readResponse(requestWasHEAD: method == "HEAD")
    }

    /// Reads more bytes into the buffer; false at end of stream (or a reset).
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
                return true
            }
            if count == 0 { return false }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return false }
            throw RawHTTPError.receive(errno)
        }
    }

    private func take(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw RawHTTPError.closedBeforeResponseEnded }
        }
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// One line without its LF and a CR before it.
    private func takeLine() throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                var bytes = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                if bytes.last == 0x0D { bytes.removeLast() }
                return String(decoding: bytes, as: UTF8.self)
            }
            guard try fill() else { throw RawHTTPError.closedBeforeResponseEnded }
        }
    }

    /// Reads one complete response: no body for HEAD, 1xx, 204 and 304; else by Content-Length,
    /// chunked (trailers skipped), or until the server closes.
    package func readResponse(requestWasHEAD: Bool = false) throws -> RawHTTPResponse {
        var response = try readResponseHead()
        let status = response.status
        if requestWasHEAD || status == 204 || status == 304 || status < 200 { return response }
        if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            response.body = try take(length)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while let chunk = try readChunk() { response.body += chunk }
        } else {
            response.body = try readUntilClosed()
        }
        return response
    }

    /// The next chunk of a chunked body as it arrives (a streamed response), or nil after the
    /// last one (its trailers skipped). Call it after ``readResponseHead()``.
    package func readChunk() throws -> [UInt8]? {
        let sizeLine = try takeLine()
        guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
            throw RawHTTPError.malformed(sizeLine)
        }
        if size == 0 {
            while try !takeLine().isEmpty {}
            return nil
        }
        let chunk = try take(size)
        _ = try takeLine()
        return chunk
    }

    /// The next `length` bytes: a body of that `Content-Length`, after ``readResponseHead()``.
    package func readResponseBody(length: Int) throws -> [UInt8] {
        try take(length)
    }

    /// The status line and headers of the next response, its body left to read (``readChunk()``).
    package func readResponseHead() throws -> RawHTTPResponse {
        let statusLine = try takeLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw RawHTTPError.malformed(statusLine)
        }
        var response = RawHTTPResponse(status: status, headers: [], body: [], head: statusLine + "\r\n")
        while true {
            let line = try takeLine()
            if line.isEmpty { break }
            response.head += line + "\r\n"
            guard let colon = line.firstIndex(of: ":") else { throw RawHTTPError.malformed(line) }
            response.headers.append(
                (
                    name: String(line[..<colon]),
                    value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                ))
        }
        return response
    }

    /// One complete response, or nil when the server closed the connection (end of stream or
    /// reset) before sending any byte of one. A response cut short still throws
    /// ``RawHTTPError/closedBeforeResponseEnded``: a stopping server may close a connection, but
    /// never in the middle of an answer.
    package func readResponseOrClosure(requestWasHEAD: Bool = false) throws -> RawHTTPResponse? {
        if buffer.isEmpty, try !fill() { return nil }
        return try readResponse(requestWasHEAD: requestWasHEAD)
    }

    /// Everything the server sends until it closes the connection.
    package func readUntilClosed() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// True when the server has already closed the connection (end of stream or reset) and sent
    /// no bytes; never waits (a test that trickles bytes asks between two of them).
    package var isAlreadyClosedByPeer: Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        return buffer.isEmpty && ((try? fill()) == false)
    }

    /// True when the server has neither sent anything nor closed the connection so far: a look at
    /// the socket that never waits.
    package var isOpenAndSilent: Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return buffer.isEmpty && poll(&descriptor, 1, 0) == 0
    }

    /// Half-closes the connection: the server reads the end of the client's bytes, and may still send.
    package func shutdownWriting() {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// True when the server closes the connection (end of stream within `seconds`) without
    /// sending further bytes. Sets the receive timeout to `seconds`.
    package func isClosedByPeer(within seconds: Int = 5) -> Bool {
        Self.setTimeout(fd, SO_RCVTIMEO, seconds: seconds)
        return buffer.isEmpty && ((try? fill()) == false)
    }
}
