// What the live tests drive: the built menu-server as a child process, a TCP relay in front of it
// that counts the requests the client sends, and a tmux pane running menu-client, read as a person
// sees it (capture-pane) and typed into (send-keys). Waits poll with a bounded timeout.

import ChildProcess
import Foundation
import HTTPTestSupport
import MenuTestSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built executables next to the test binary (`swift build` puts menu-server and menu-client together).
enum TerminalTestPaths {
    static func menuServer() throws -> URL { try LivePaths.executable() }
    static func menuClient() throws -> URL {
        let client = try LivePaths.executable().deletingLastPathComponent().appendingPathComponent("menu-client")
        guard FileManager.default.isExecutableFile(atPath: client.path) else {
            throw LiveError("\(client.path) not built (swift build)")
        }
        return client
    }
}

/// A TCP relay on 127.0.0.1 (port 0) to `upstreamPort` that counts the `GET /rows` requests and
/// the long polls (`GET /changes`) passing through: what the server saw of a client, without
/// touching the server.
final class CountingRelay: Sendable {
    let port: Int
    private let listener: Int32
    private let rowsRequests = Mutex(0)
    private let pollRequests = Mutex(0)
    private let requests = Mutex(0)

    init(upstreamPort: Int) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard listener >= 0, bound == 0, listen(listener, 16) == 0 else {
            throw LiveError("relay: cannot listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var upstream = Self.loopback(port: upstreamPort)
                let connected = withUnsafePointer(to: &upstream) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard connected == 0 else {
                    _ = close(client)
                    _ = close(server)
                    continue
                }
                Thread.detachNewThread { self.pump(from: client, to: server, counting: true) }
                Thread.detachNewThread { self.pump(from: server, to: client, counting: false) }
            }
        }
    }

    /// `GET /rows` requests relayed so far, `GET /changes` ones, and every request.
    var counts: (rows: Int, polls: Int, all: Int) {
        (rowsRequests.withLock { $0 }, pollRequests.withLock { $0 }, requests.withLock { $0 })
    }

    func stop() {
        _ = shutdown(listener, Int32(SHUT_RDWR))
        _ = close(listener)
    }

    private func pump(from source: Int32, to target: Int32, counting: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var carry: [UInt8] = []
        let rows = Array("GET /rows".utf8)
        let polls = Array("GET /changes".utf8)
        let requestLine = Array(" HTTP/1.1\r\n".utf8)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            if counting {
                let scanned = carry + buffer[..<count]
                rowsRequests.withLock { $0 += Self.occurrences(of: rows, in: scanned) }
                pollRequests.withLock { $0 += Self.occurrences(of: polls, in: scanned) }
                requests.withLock { $0 += Self.occurrences(of: requestLine, in: scanned) }
                carry = Array(scanned.suffix(requestLine.count - 1))
            }
            var sent = 0
            while sent < count {
                let written = buffer[sent ..< count].withUnsafeBytes {
                    send(target, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard written > 0 else { break }
                sent += written
            }
        }
        _ = shutdown(target, Int32(SHUT_WR))
        _ = shutdown(source, Int32(SHUT_RD))
    }

    static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int {
        guard haystack.count >= needle.count else { return 0 }
        return (0 ... haystack.count - needle.count).count { haystack[$0 ..< $0 + needle.count].elementsEqual(needle) }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

/// A detached tmux session of its own (a private server socket, no config file) running one
/// command in a pane of a fixed size.
final class TmuxPane {
    static let tmux = "/usr/bin/tmux"
    /// The server's socket, removed with the server (tmux leaves it behind after `kill-server`).
    let socketPath: String
    /// What the pane's command needs for as long as the pane is used (its server, a relay).
    private let kept: [AnyObject]

    init(command: String, width: Int = 100, height: Int = 30, keeping kept: [AnyObject] = []) throws {
        self.kept = kept
        socketPath =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "menu-client-test-\(UUID().uuidString.prefix(8)).tmux"
            ).path
        try run(["new-session", "-d", "-x", String(width), "-y", String(height), "-s", "test", command])
    }

    deinit {
        _ = try? run(["kill-server"])
        try? FileManager.default.removeItem(atPath: socketPath)
    }

    /// The pane's lines as shown (trailing spaces trimmed).
    func screen() throws -> [String] {
        try capture().split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0.reversed().drop { $0 == " " }.reversed())
        }
    }

    /// The pane as `capture-pane -p` prints it with `options`: `-e` adds the SGR escapes of each
    /// cell's colours and attributes, `-J` joins the lines a long line wrapped into.
    func capture(_ options: String...) throws -> String {
        try run(["capture-pane", "-p"] + options + ["-t", "test"])
    }

    /// Types `keys` (tmux key names: "Enter", "Down", "PageDown", or literal text with `literal`).
    func send(_ keys: String..., literal: Bool = false) throws {
        try run(["send-keys", "-t", "test"] + (literal ? ["-l"] : []) + keys)
    }

    /// A tmux format for the pane (`#{alternate_on}`, `#{cursor_flag}`, `#{pane_pid}`).
    func format(_ format: String) throws -> String {
        try run(["display-message", "-p", "-t", "test", format]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func resize(width: Int, height: Int) throws {
        try run(["resize-window", "-t", "test", "-x", String(width), "-y", String(height)])
    }

    /// Polls the screen (every 50 ms, at most `timeoutSeconds`) until `condition` holds; returns that screen.
    @discardableResult
    func waitForScreen(_ what: String, timeoutSeconds: Double = 15, _ condition: ([String]) -> Bool) throws -> [String]
    {
        var lines: [String] = []
        let held = try eventually(within: .milliseconds(Int(timeoutSeconds * 1000)), every: .milliseconds(50)) {
            lines = try screen()
            return condition(lines)
        }
        guard held else {
            throw LiveError("waited \(timeoutSeconds) s for \(what); the screen:\n" + lines.joined(separator: "\n"))
        }
        return lines
    }

    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        let outcome = try ChildProcess.run(
            executable: Self.tmux, arguments: ["-S", socketPath, "-f", "/dev/null"] + arguments,
            timeout: .seconds(20))
        guard outcome.termination == .exited(0) else {
            throw LiveError(
                "tmux \(arguments.joined(separator: " ")) failed: \(String(decoding: outcome.standardError, as: UTF8.self))"
            )
        }
        return String(decoding: outcome.standardOutput, as: UTF8.self)
    }
}
