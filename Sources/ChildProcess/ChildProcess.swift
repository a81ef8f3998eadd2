import CSpawn
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn`, for the tests and benchmarks that run the built
/// executables.
///
/// Foundation's `Process.run()` cannot be used for that on Linux: up to Swift 6.3 it copies a
/// fixed 256 bytes out of every `/proc/self/fd` directory entry and crashes (SIGSEGV in
/// `__memmove_avx_unaligned_erms`) when a process with many descriptors open, such as a test
/// run with a few hundred live servers, has its last entry next to an unmapped page
/// (swiftlang/swift-corelibs-foundation#5472).
///
/// Invariant: the child's standard input is `/dev/null`; it inherits no descriptor of this
/// process except the standard output and error asked for (`closefrom(3)` in the child on
/// Linux, close-on-exec by default on Darwin), and its signal mask is empty with `SIGPIPE` at its
/// default. `pid` is reaped exactly once, by ``wait(timeout:)`` (or `deinit`, which kills a child
/// still running); signals are only sent before that, so never to a recycled pid. The pipe ends it
/// returns are closed by `deinit`.
package final class ChildProcess: Sendable {
    /// Where the child's standard output or error goes.
    package enum Output: Sendable {
        /// This process's own stream.
        case inherit
        /// `/dev/null`.
        case discard
        /// A pipe whose read end is ``standardOutput`` / ``standardError``.
        case pipe
        /// A file, created or truncated.
        case file(String)
    }

    /// How a child ended.
    package enum Termination: Sendable, Hashable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        package var description: String {
            switch self {
            case .exited(let code): "exit code \(code)"
            case .signaled(let signal): "signal \(signal)"
            }
        }
    }

    /// The child's process id.
    package let pid: pid_t
    /// The read end of the child's standard output pipe (``Output/pipe`` only).
    package let standardOutput: Int32?
    /// The read end of the child's standard error pipe (``Output/pipe`` only).
    package let standardError: Int32?

    private let termination = Mutex<Termination?>(nil)

    /// Starts `executable` (a path, not searched in `PATH`) with `arguments` (without argv[0]).
    /// `environment` nil passes this process's environment on unchanged.
    package init(
        executable: String,
        arguments: [String],
        environment: [String: String]? = nil,
        workingDirectory: String? = nil,
        standardOutput: Output = .inherit,
        standardError: Output = .inherit
    ) throws(ChildProcessError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        var parentEnds: [Int32] = []  // read ends this object keeps
        var childEnds: [Int32] = []  // write ends, closed here once the child has them
        defer { childEnds.forEach { _ = close($0) } }
        var failure: ChildProcessError? = nil

        func redirect(_ output: Output, to target: Int32) -> Int32? {
            switch output {
            case .inherit:
                return nil
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
                return nil
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                return nil
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard makePipe(&ends) else {
                    failure = .cannotStart(executable: executable, reason: "pipe: \(errnoText())")
                    return nil
                }
                parentEnds.append(ends[0])
                childEnds.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], target)
                return ends[0]
            }
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let outputEnd = redirect(standardOutput, to: 1)
        let errorEnd = redirect(standardError, to: 2)
        if let failure {
            parentEnds.forEach { _ = close($0) }
            throw failure
        }
        if let workingDirectory {
            cspawn_add_chdir(&actions, workingDirectory)
        }

        // Only the three standard descriptors reach the child.
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Glibc) || canImport(Musl)
        guard cspawn_add_closefrom(&actions, 3) == 0 else {
            parentEnds.forEach { _ = close($0) }
            throw .cannotStart(
                executable: executable, reason: "this C library has no posix_spawn_file_actions_addclosefrom_np")
        }
        #elseif canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        posix_spawn_file_actions_addinherit_np(&actions, 0)
        posix_spawn_file_actions_addinherit_np(&actions, 1)
        posix_spawn_file_actions_addinherit_np(&actions, 2)
        #endif
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        sigaddset(&defaultSignals, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = CStringArray([executable] + arguments)
        defer { argv.deallocate() }
        let envp = environment.map { CStringArray($0.map { "\($0.key)=\($0.value)" }) }
        defer { envp?.deallocate() }

        var child: pid_t = 0
        let status = posix_spawn(&child, executable, &actions, &attributes, argv.pointers, envp?.pointers ?? environ)
        guard status == 0 else {
            parentEnds.forEach { _ = close($0) }
            throw .cannotStart(executable: executable, reason: String(cString: strerror(status)))
        }
        self.pid = child
        self.standardOutput = outputEnd
        self.standardError = errorEnd
    }

    /// Sends `signal` unless the child has already been reaped.
    package func send(_ signal: Int32) {
        termination.withLock { ended in
            if ended == nil { _ = kill(pid, signal) }
        }
    }

    /// Whether the child has not yet exited (reaps it if it just did).
    package var isRunning: Bool {
        reap() == nil
    }

    /// Waits until the child exits, at most `timeout` (`nil`: no limit); nil if it is still running.
    package func wait(timeout: Duration? = nil) -> Termination? {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        while true {
            if let ended = reap() { return ended }
            if let deadline, clock.now >= deadline { return nil }
            usleep(2_000)
        }
    }

    /// Waits at most `timeout` for the child to exit; kills it (SIGKILL) if it has not.
    /// Returns how it ended and whether that was on its own.
    @discardableResult
    package func waitOrKill(timeout: Duration) -> (termination: Termination, exitedOnItsOwn: Bool) {
        if let ended = wait(timeout: timeout) { return (ended, true) }
        send(SIGKILL)
        return (wait()!, false)
    }

    /// `waitpid(WNOHANG)` under the lock, so exactly one caller reaps the child.
    private func reap() -> Termination? {
        termination.withLock { ended in
            if let ended { return ended }
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, WNOHANG) } while result < 0 && errno == EINTR
            guard result == pid else { return nil }
            let low = status & 0x7f
            ended = low == 0 ? .exited((status >> 8) & 0xff) : .signaled(low)
            return ended
        }
    }

    deinit {
        if termination.withLock({ $0 }) == nil {
            send(SIGKILL)
            _ = wait()
        }
        if let standardOutput { _ = close(standardOutput) }
        if let standardError { _ = close(standardError) }
    }
}

extension ChildProcess {
    /// A finished child's outcome and everything it wrote.
    package struct Outcome: Sendable {
        package var termination: Termination
        package var standardOutput: [UInt8]
        package var standardError: [UInt8]
        /// False when the child had to be killed at the time limit.
        package var exitedOnItsOwn: Bool
    }

    /// Runs `executable` to completion, capturing both output streams (read as they come, so a
    /// chatty child never blocks on a full pipe). Past `timeout` the child is killed (SIGKILL).
    package static func run(
        executable: String,
        arguments: [String],
        environment: [String: String]? = nil,
        workingDirectory: String? = nil,
        timeout: Duration = .seconds(60)
    ) throws(ChildProcessError) -> Outcome {
        let child = try ChildProcess(
            executable: executable, arguments: arguments, environment: environment,
            workingDirectory: workingDirectory, standardOutput: .pipe, standardError: .pipe)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var collected: [[UInt8]] = [[], []]
        var open = [child.standardOutput!, child.standardError!]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !open.isEmpty, clock.now < deadline {
            var descriptors = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&descriptors, nfds_t(descriptors.count), 50)
            guard ready > 0 else { continue }
            for descriptor in descriptors where descriptor.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(descriptor.fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                let slot = descriptor.fd == child.standardOutput ? 0 : 1
                if count > 0 {
                    collected[slot].append(contentsOf: buffer[..<count])
                } else {
                    open.removeAll { $0 == descriptor.fd }
                }
            }
        }
        let remaining = max(.zero, deadline - clock.now)
        let (termination, onItsOwn) = child.waitOrKill(timeout: open.isEmpty ? remaining : .zero)
        return Outcome(
            termination: termination, standardOutput: collected[0], standardError: collected[1],
            exitedOnItsOwn: onItsOwn && open.isEmpty)
    }

    /// Reads one line (up to `\n`, which is dropped) from `descriptor`, waiting at most `timeout`;
    /// nil on timeout or end of stream. Reads byte by byte, so nothing after the line is consumed.
    package static func readLine(from descriptor: Int32, timeout: Duration) -> String? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var line: [UInt8] = []
        while clock.now < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            var byte: UInt8 = 0
            let count = read(descriptor, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }

    /// Reads `descriptor` to its end (blocking).
    package static func readToEnd(_ descriptor: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return bytes }
            bytes.append(contentsOf: buffer[..<count])
        }
    }
}

/// Why a child could not be started.
package enum ChildProcessError: Error, Sendable, CustomStringConvertible {
    case cannotStart(executable: String, reason: String)

    package var description: String {
        switch self {
        case .cannotStart(let executable, let reason):
            "cannot start \(executable): \(reason)"
        }
    }
}

/// A NULL-terminated array of C strings for `posix_spawn`'s argv and envp; ``deallocate()`` once.
private struct CStringArray {
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

    init(_ strings: [String]) {
        pointers = .allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { pointers[index] = strdup(string) }
        pointers[strings.count] = nil
    }

    func deallocate() {
        var index = 0
        while let string = pointers[index] {
            free(string)
            index += 1
        }
        pointers.deallocate()
    }
}

private func makePipe(_ ends: inout [Int32]) -> Bool {
    cspawn_pipe_cloexec(&ends) == 0
}

private func errnoText() -> String {
    String(cString: strerror(errno))
}
