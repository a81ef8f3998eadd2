// A one-way-lossy HTTP proxy for the client's tests: requests reach the real server, but the
// answers to the first few requests whose line starts with a given prefix are dropped (the
// client's connection is closed instead), as when a phone loses its network after sending.

import Foundation
import HTTPTestSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Listens on 127.0.0.1 (port ``port``) and forwards each request to the server on
/// `upstreamPort` over a connection of its own; one thread per client connection. Stop with ``stop()``.
final class LossyProxy: Sendable {
    let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    /// The request-line prefix whose answers are dropped, and how many more to drop.
    private let dropping: Mutex<(prefix: String, remaining: Int)>
    private let dropped = Mutex<[String]>([])
    private let relayed = Mutex<[String]>([])
    /// Every request line received, in order.
    var requests: [String] { relayed.withLock { $0 } }
    /// The request lines whose answers were dropped.
    var droppedRequests: [String] { dropped.withLock { $0 } }

    init(upstreamPort: Int, dropAnswersTo prefix: String, times: Int) throws {
        self.upstreamPort = upstreamPort
        dropping = Mutex((prefix, times))
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound, listen(listener, 16) == 0 else { throw LossyProxyError("cannot listen on 127.0.0.1: errno \(errno)") }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// The client connections open now, shut down by ``stop()`` so that their threads end.
    private let clients = Mutex<Set<Int32>>([])

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        clients.withLock { for client in $0 { shutdown(client, Int32(SHUT_RDWR)) } }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                close(listener)
                return
            }
            clients.withLock { _ = $0.insert(client) }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    /// Relays requests of one client connection until it closes or an answer is dropped.
    private func serve(_ client: Int32) {
        defer {
            clients.withLock { _ = $0.remove(client) }
            close(client)
        }
        guard let upstream = try? RawHTTPConnection(port: upstreamPort) else { return }
        var buffer: [UInt8] = []
        while let (line, headers, body) = readRequest(client, &buffer) {
            relayed.withLock { $0.append(line) }
            let parts = line.split(separator: " ")
            guard parts.count == 3 else { return }
            let forwarded = headers.filter { !["host", "content-length"].contains($0.0.lowercased()) }
            guard let response = try? upstream.request(String(parts[0]), String(parts[1]), headers: forwarded, body: body) else { return }
            let drop = dropping.withLock { rule in
                guard rule.remaining > 0, line.hasPrefix(rule.prefix) else { return false }
                rule.remaining -= 1
                return true
            }
            if drop {
                dropped.withLock { $0.append(line) }
                return
            }
            let bytes = Array((response.head + "\r\n").utf8) + response.body
            guard bytes.withUnsafeBytes({ send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else { return }
        }
    }

    /// One request (line, headers, body by Content-Length) from `client`; nil when it closed.
    private func readRequest(_ client: Int32, _ buffer: inout [UInt8]) -> (String, [(String, String)], [UInt8])? {
        let end = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            if let found = buffer.indices.dropLast(3).first(where: { Array(buffer[$0 ..< $0 + 4]) == end }) {
                headEnd = found
            } else if !receive(client, &buffer) {
                return nil
            }
        }
        let lines = String(decoding: buffer[..<headEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        buffer.removeFirst(headEnd! + 4)
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
        while buffer.count < length { guard receive(client, &buffer) else { return nil } }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return (lines[0], headers, body)
    }

    private func receive(_ client: Int32, _ buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer += chunk[..<count]
        return true
    }
}

struct LossyProxyError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
