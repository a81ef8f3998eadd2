// An HTTP proxy for tests in front of a real server: each request is read whole, then a rule the
// test gives decides what the client gets: the server's answer, no answer (a lost one), or an
// answer the test wrote (a hostile proxy's).

import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Listens on 127.0.0.1 (port ``port``) and handles each request of a client as ``Rule`` says;
/// one thread per client connection, each with a connection of its own to the server on
/// `upstreamPort`. Stop with ``stop()``.
package final class HTTPTestProxy: Sendable {
    /// What the client gets for one request.
    package enum Decision: Sendable {
        /// The server's answer.
        case forward
        /// The request reaches the server, and the client's connection is closed instead of answered.
        case forwardAndDropAnswer
        /// `answer` (status line, headers, blank line, body: bytes as sent), the server never asked.
        case answer([UInt8])
    }

    /// Decides from the request line (`POST /groups/x/toggle HTTP/1.1`).
    package typealias Rule = @Sendable (_ requestLine: String) -> Decision

    package let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    private let rule: Rule
    private let received = Mutex<[String]>([])
    /// The client connections open now, shut down by ``stop()`` so that their threads end.
    private let clients = Mutex<Set<Int32>>([])

    /// Every request line received, in order.
    package var requests: [String] { received.withLock { $0 } }

    package init(upstreamPort: Int, rule: @escaping Rule) throws(RawHTTPError) {
        self.upstreamPort = upstreamPort
        self.rule = rule
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw .socket(errno) }
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound, listen(listener, 16) == 0 else {
            let code = errno
            close(listener)
            throw .socket(code)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    package func stop() {
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

    /// Handles the requests of one client connection until it closes or an answer is dropped.
    private func serve(_ client: Int32) {
        defer {
            clients.withLock { _ = $0.remove(client) }
            close(client)
        }
        var upstream: RawHTTPConnection?
        var buffer: [UInt8] = []
        while let (line, headers, body) = readRequest(client, &buffer) {
            received.withLock { $0.append(line) }
            let parts = line.split(separator: " ")
            guard parts.count == 3 else { return }
            var answer: [UInt8]
            switch rule(line) {
            case .answer(let bytes):
                answer = bytes
            case let decision:
                if upstream == nil { upstream = try? RawHTTPConnection(port: upstreamPort) }
                let forwarded = headers.filter { !["host", "content-length"].contains($0.0.lowercased()) }
                guard
                    let response = try? upstream?.request(
                        String(parts[0]), String(parts[1]), headers: forwarded, body: body)
                else { return }
                if case .forwardAndDropAnswer = decision { return }
                answer = Array((response.head + "\r\n").utf8) + response.body
            }
            guard
                answer.withUnsafeBytes({ send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == answer.count
            else { return }
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
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
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
