// A tiny blocking HTTP/1.1 client over a POSIX TCP socket, so tests can send exact bytes
// (duplicate headers, chunked bodies, several requests on one connection) and see exact bytes back.

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum RawHTTPError: Error, Equatable {
    case socket(Int32)
    case connect(Int32)
    case send(Int32)
    case receive(Int32)
    case closedBeforeResponseEnded
    case malformed(String)
}

/// One parsed response.
struct RawHTTPResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    var head: String

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// One client TCP connection to 127.0.0.1. Not thread-safe: one thread uses it.
final class RawHTTPConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects, with a receive timeout so a broken server fails the test instead of hanging it.
    init(port: Int, receiveTimeoutSeconds: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError.socket(errno) }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = RawHTTPConnection.connectSocket(fd, port: port)
        if result != 0 {
            close(fd)
            throw RawHTTPError.connect(result)
        }
    }

    deinit {
        close(fd)
    }

    /// 0 on success, else the `errno` of `connect(2)` (e.g. `ECONNREFUSED`).
    static func connectSocket(_ fd: Int32, port: Int) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        _ = inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return rc == 0 ? 0 : errno
    }

    /// The `errno` a fresh connection attempt to `port` fails with, or 0 if it connects.
    static func connectErrno(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return connectSocket(fd, port: port)
    }

    func sendBytes(_ bytes: [UInt8]) throws {
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

    func sendText(_ text: String) throws {
        try sendBytes(Array(text.utf8))
    }

    /// Reads more bytes into the buffer; false at end of stream.
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

    private func takeLine() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[...index])
                buffer.removeFirst(index + 1)
                return String(decoding: line, as: UTF8.self)
                    .trimmingCharacters(in: CharacterSet(charactersIn: "\r\n"))
            }
            guard try fill() else { throw RawHTTPError.closedBeforeResponseEnded }
        }
    }

    /// Reads one complete response (Content-Length, chunked, or until close).
    func readResponse(requestWasHEAD: Bool = false) throws -> RawHTTPResponse {
        let statusLine = try takeLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw RawHTTPError.malformed(statusLine)
        }
        var head = statusLine + "\r\n"
        var headers: [(name: String, value: String)] = []
        while true {
            let line = try takeLine()
            if line.isEmpty { break }
            head += line + "\r\n"
            guard let colon = line.firstIndex(of: ":") else { throw RawHTTPError.malformed(line) }
            headers.append(
                (
                    name: String(line[..<colon]),
                    value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                ))
        }
        var response = RawHTTPResponse(status: status, headers: headers, body: [], head: head)
        if requestWasHEAD || status == 204 || status == 304 || status < 200 {
            return response
        }
        if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            response.body = try take(length)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                let sizeLine = try takeLine()
                guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else {
                    throw RawHTTPError.malformed(sizeLine)
                }
                if size == 0 {
                    while try !takeLine().isEmpty {}
                    break
                }
                response.body += try take(size)
                _ = try takeLine()
            }
        } else {
            response.body = try readUntilClosed()
        }
        return response
    }

    /// Everything the server sends until it closes the connection.
    func readUntilClosed() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }
}
