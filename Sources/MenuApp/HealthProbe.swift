#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `menu-server healthcheck`: asks a running server's `GET /healthz` over a plain TCP socket,
/// so a container image needs no `curl`. It reads the same settings as the server (flags and
/// `MENU_*` variables), so the port follows `MENU_PORT`; a wildcard listen address (`0.0.0.0`,
/// `::`) is asked on its loopback.
///
/// Cost: one connection, one request, one read of the status line, all under `timeout` (connect,
/// send and receive each get what is left of it). No allocation beyond the address lookup and a
/// 512-byte buffer.
package struct HealthProbe: Sendable {
    package var host: String
    package var port: Int
    package var timeoutMilliseconds: Int32

    package init(settings: ServerSettings, timeoutMilliseconds: Int32 = 2000) {
        switch settings.host {
        case "0.0.0.0", "": host = "127.0.0.1"
        case "::", "[::]": host = "::1"
        default:
            host =
                settings.host.hasPrefix("[") && settings.host.hasSuffix("]")
                ? String(settings.host.dropFirst().dropLast()) : settings.host
        }
        port = settings.port
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Why the probe failed, in words for the health check's output.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Asks `GET /healthz` and returns its status line when it is `200`; throws otherwise.
    package func check() throws(Failure) -> String {
        let deadline = Self.now() + Int64(timeoutMilliseconds)
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var found: UnsafeMutablePointer<addrinfo>?
        let lookup = getaddrinfo(host, String(port), &hints, &found)
        guard lookup == 0, let first = found else {
            throw Failure(description: "cannot resolve \(host): \(String(cString: gai_strerror(lookup)))")
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address for \(host)"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let address = candidate {
            candidate = address.pointee.ai_next
            do {
                return try ask(address.pointee, deadline: deadline)
            } catch {
                lastError = error.description
            }
        }
        throw Failure(description: lastError)
    }

    private func ask(_ address: addrinfo, deadline: Int64) throws(Failure) -> String {
        let socket = Glibc.socket(
            address.ai_family, address.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            address.ai_protocol)
        guard socket >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        let where_ = "\(host) port \(port)"
        if connect(socket, address.ai_addr, address.ai_addrlen) != 0 {
            guard errno == EINPROGRESS else {
                throw Failure(description: "cannot connect to \(where_): \(String(cString: strerror(errno)))")
            }
            try wait(socket, for: Int16(POLLOUT), until: deadline, doing: "connecting to \(where_)")
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else {
                throw Failure(description: "cannot connect to \(where_): \(String(cString: strerror(error)))")
            }
        }
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let request = Array(
            "GET /healthz HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\nUser-Agent: menu-server-healthcheck\r\n\r\n"
                .utf8)
        var sent = 0
        while sent < request.count {
            try wait(socket, for: Int16(POLLOUT), until: deadline, doing: "sending to \(where_)")
            let written = request[sent...].withUnsafeBytes {
                send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else {
                if written < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                throw Failure(description: "cannot send to \(where_): \(String(cString: strerror(errno)))")
            }
            sent += written
        }
        // The status line is all that is read: "HTTP/1.1 200 OK".
        var buffer = [UInt8](repeating: 0, count: 512)
        var received = 0
        while !buffer[..<received].contains(UInt8(ascii: "\n")) && received < buffer.count {
            try wait(socket, for: Int16(POLLIN), until: deadline, doing: "waiting for \(where_)")
            let count = buffer[received...].withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            guard count > 0 else { break }
            received += count
        }
        let head = String(decoding: buffer[..<received], as: UTF8.self)
        let statusLine = String(head.prefix { $0 != "\r" && $0 != "\n" })
        guard statusLine.hasPrefix("HTTP/1.1 200 ") || statusLine.hasPrefix("HTTP/1.0 200 ") else {
            throw Failure(
                description: statusLine.isEmpty ? "no answer from \(where_)" : "\(where_) answered \(statusLine)")
        }
        return statusLine
    }

    /// Polls `socket` for `events` until `deadline` (milliseconds of the monotonic clock).
    private func wait(_ socket: Int32, for events: Int16, until deadline: Int64, doing what: String) throws(Failure) {
        while true {
            let left = deadline - Self.now()
            guard left > 0 else { throw Failure(description: "timed out after \(timeoutMilliseconds) ms \(what)") }
            var entry = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(clamping: left))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw Failure(description: "poll: \(String(cString: strerror(errno)))") }
        }
    }

    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}
