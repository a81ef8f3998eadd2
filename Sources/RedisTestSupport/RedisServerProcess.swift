import ChildProcess
import Foundation
import HTTPTestSupport
import RedisClient
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `redis-server` for tests, started through ``ChildProcess`` on a free loopback port (or a
/// unix socket) with its own temporary directory; no RDB snapshots, AOF only when asked (then
/// fsynced before each reply, so a write that was answered survives ``kill()``).
///
/// Invariant: after `init` returns the server answers PING on ``endpoint``; `restart()` keeps the
/// port or socket, the directory and so the AOF. The directory is removed by `stop()` or `deinit`
/// (which kills a server still running). Thread-safe: the child and the helper connection are
/// behind one lock. Cost: a process start (about 10 ms) per `init` and `restart`.
package final class RedisServerProcess: Sendable {
    /// Where the test support looks for the server.
    package static let executable = "/usr/bin/redis-server"

    package let endpoint: RedisEndpoint
    /// The directory holding the AOF, the log and the unix socket.
    package let directory: String
    private let arguments: [String]
    private let state: Mutex<State>

    private struct State: ~Copyable {
        var child: ChildProcess?
        var connection: RedisConnection
        var removed = false
    }

    /// The URL a `--store` option takes (with the password, when there is one).
    package var url: String {
        let secret = endpoint.password.map { ":\($0)@" } ?? ""
        switch endpoint.address {
        case .tcp(let host, let port): return "redis://\(secret)\(host):\(port)"
        case .unix(let path): return "redis+unix://\(secret)\(path)"
        }
    }

    package init(unixSocket: Bool = false, appendOnly: Bool = false, password: String? = nil) throws {
        var template = Array("/tmp/redis-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw RedisServerProcessError("mkdtemp: \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        var common = [
            "--bind", "127.0.0.1", "--save", "", "--appendonly", appendOnly ? "yes" : "no", "--appendfsync", "always",
            "--dir", directory,
            "--logfile", directory + "/redis.log", "--daemonize", "no"
        ]
        if let password { common += ["--requirepass", password] }
        var attempt = 0
        while true {
            attempt += 1
            let address: RedisEndpoint.Address
            let arguments: [String]
            if unixSocket {
                address = .unix(path: directory + "/redis.sock")
                arguments =
                    ["--port", "0", "--unixsocket", directory + "/redis.sock", "--unixsocketperm", "700"] + common
            } else {
                let port = try Self.freeLoopbackPort()
                address = .tcp(host: "127.0.0.1", port: port)
                arguments = ["--port", String(port)] + common
            }
            let endpoint = RedisEndpoint(address: address, password: password)
            do {
                let child = try Self.launch(arguments: arguments, endpoint: endpoint, directory: directory)
                self.endpoint = endpoint
                self.directory = directory
                self.arguments = arguments
                self.state = Mutex(State(child: child, connection: Self.helperConnection(endpoint)))
                return
            } catch let error as RedisServerProcessError where error.addressInUse && attempt < 5 {
                continue  // another process took the port between our probe and redis's bind
            } catch {
                try? FileManager.default.removeItem(atPath: directory)
                throw error
            }
        }
    }

    deinit {
        state.withLock { state in
            if let child = state.child {
                child.send(SIGKILL)
                _ = child.wait()
            }
            state.connection.disconnect()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Sends a command on this object's own connection (which never backs off). A client-side
    /// failure comes back as an `.error` reply that starts with `RedisServerProcess:`.
    @discardableResult
    package func command(_ arguments: String...) -> RedisReply {
        state.withLock { state in
            do { return try state.connection.command(arguments.map { Array($0.utf8) }) } catch {
                return .error("RedisServerProcess: \(error)")
            }
        }
    }

    /// Calls per command from `INFO commandstats` (`cmdstat_get:calls=3,...` → `"get": 3`;
    /// subcommands as Redis names them, e.g. `"script|load"`). The INFO calls themselves count.
    package func commandCalls() -> [String: Int] {
        guard let text = command("INFO", "commandstats").text else { return [:] }
        var calls: [String: Int] = [:]
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[line.index(line.startIndex, offsetBy: 8) ..< colon])
            for field in line[line.index(after: colon)...].split(separator: ",") where field.hasPrefix("calls=") {
                calls[name] = Int(field.dropFirst(6))
            }
        }
        return calls
    }

    /// SIGSTOP: the server holds its connections but answers nothing.
    package func pause() { signal(SIGSTOP) }
    /// SIGCONT after ``pause()``.
    package func resume() { signal(SIGCONT) }

    /// SIGKILL, waiting until it has ended (the AOF keeps what was fsynced; `restart()` brings it back).
    package func kill() {
        state.withLock { state in
            if let child = state.child {
                child.send(SIGKILL)
                _ = child.wait()
            }
            state.child = nil
            state.connection.disconnect()
        }
    }

    /// SIGTERM and wait, then start again on the same port or socket and directory (its AOF kept).
    package func restart() throws {
        try state.withLock { state in
            Self.terminate(&state)
            state.child = try Self.launch(arguments: arguments, endpoint: endpoint, directory: directory)
        }
    }

    /// SIGTERM, wait until it has ended, remove the directory.
    package func stop() {
        state.withLock { state in
            Self.terminate(&state)
            if !state.removed { try? FileManager.default.removeItem(atPath: directory) }
            state.removed = true
        }
    }

    private func signal(_ number: Int32) {
        state.withLock { state in state.child?.send(number) }
    }

    private static func terminate(_ state: inout State) {
        if let child = state.child {
            child.send(SIGCONT)  // a paused server cannot act on SIGTERM
            child.send(SIGTERM)
            child.waitOrKill(timeout: .seconds(10))
        }
        state.child = nil
        state.connection.disconnect()
    }

    private static func helperConnection(_ endpoint: RedisEndpoint) -> RedisConnection {
        RedisConnection(
            endpoint: endpoint, options: RedisOptions(timeout: .seconds(5), initialBackoff: .zero, maxBackoff: .zero))
    }

    /// Starts the server and waits (at most 10 s) until PING answers on a connection of its own.
    private static func launch(arguments: [String], endpoint: RedisEndpoint, directory: String) throws -> ChildProcess {
        let child = try ChildProcess(
            executable: executable, arguments: arguments, standardOutput: .discard, standardError: .discard)
        let probe = RedisConnection(
            endpoint: endpoint,
            options: RedisOptions(timeout: .seconds(1), initialBackoff: .milliseconds(2), maxBackoff: .milliseconds(20))
        )
        var answered = false
        _ = eventually(within: .seconds(10), every: .milliseconds(2)) {
            if case .status("PONG")? = try? probe.command("PING") { answered = true }
            return answered || !child.isRunning
        }
        if answered { return child }
        if !child.isRunning {
            let log = (try? String(contentsOfFile: directory + "/redis.log", encoding: .utf8)) ?? ""
            throw RedisServerProcessError(
                "redis-server exited: \(log.suffix(600))", addressInUse: log.contains("Address already in use"))
        }
        child.send(SIGKILL)
        _ = child.wait()
        throw RedisServerProcessError("redis-server did not answer PING within 10 s (\(endpoint))")
    }

    /// A port the kernel just handed out on 127.0.0.1 (bound to port 0, then closed).
    private static func freeLoopbackPort() throws -> Int {
        do {
            return try HTTPTestSupport.freeLoopbackPort()
        } catch {
            throw RedisServerProcessError("bind 127.0.0.1:0: \(error)")
        }
    }
}

/// Why a test redis-server could not be started.
package struct RedisServerProcessError: Error, CustomStringConvertible {
    package var description: String
    var addressInUse = false
    init(_ description: String, addressInUse: Bool = false) {
        self.description = description
        self.addressInUse = addressInUse
    }
}
