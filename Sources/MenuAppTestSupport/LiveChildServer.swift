// The one child-process launcher of the app tests: the built `menu-server` started as a child
// (ChildProcess, posix_spawn: Foundation's Process crashes with many descriptors open), and any
// other executable run to completion. `swift build` must have built the executable.

import ChildProcess
import Foundation
import HTTPTestSupport
import MenuTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The outcome of a finished child process.
package struct LiveExit: Sendable {
    package var termination: ChildProcess.Termination
    package var stdout: String
    package var stderr: String

    /// True when the child exited (rather than being killed by a signal).
    package var exited: Bool { if case .exited = termination { true } else { false } }
    /// The exit code; -1 when a signal ended the child.
    package var status: Int32 { if case .exited(let code) = termination { code } else { -1 } }
}

/// The environment for a child menu-server: this one without any MENU_* variable.
package func liveChildEnvironment() -> [String: String] {
    ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MENU_") }
}

/// Runs `executable` with `arguments` to completion (at most `timeoutSeconds`) in the package
/// root, capturing both streams; `environment` is added to ``liveChildEnvironment()``.
package func liveRun(
    _ executable: URL, _ arguments: [String], environment: [String: String] = [:],
    timeoutSeconds: Double = 30
) throws -> LiveExit {
    let outcome = try ChildProcess.run(
        executable: executable.path, arguments: arguments,
        environment: liveChildEnvironment().merging(environment) { $1 },
        workingDirectory: LivePaths.packageRoot.path, timeout: .milliseconds(Int(timeoutSeconds * 1000)))
    guard outcome.exitedOnItsOwn else {
        throw LiveError("\(executable.lastPathComponent) \(arguments) did not exit within \(timeoutSeconds) s")
    }
    return LiveExit(
        termination: outcome.termination,
        stdout: String(decoding: outcome.standardOutput, as: UTF8.self),
        stderr: String(decoding: outcome.standardError, as: UTF8.self))
}

/// A `menu-server` child process started with `--port 0`, its port read from its first stdout line.
package final class LiveChildServer {
    package let process: ChildProcess
    package let stderrText = LiveLocked("")
    package let stderrDone = DispatchGroup()
    package private(set) var listeningLine = ""
    package private(set) var port = 0
    /// How the child ended, once ``signalAndWait(_:timeoutSeconds:)`` has seen it end.
    package private(set) var termination: ChildProcess.Termination?

    /// Starts `executable` (the built menu-server when nil) with `arguments`, which must include
    /// `--port 0`, and reads its port from the listening line (waited for at most 240 s: a hang
    /// guard, not a speed check; the 111k-node menu under AddressSanitizer on a loaded machine
    /// took over 60 s).
    package init(arguments: [String] = ["--port", "0", "--config", LivePaths.menuConfig], executable: String? = nil)
        throws
    {
        process = try ChildProcess(
            executable: try executable ?? LivePaths.executable().path, arguments: arguments,
            environment: liveChildEnvironment(), workingDirectory: LivePaths.packageRoot.path,
            standardOutput: .pipe, standardError: .pipe)
        // Drain stderr in the background so the child never blocks on it; `stderrText` grows as
        // lines arrive, so a test can wait for a log line while the child runs.
        let errors = process.standardError!
        let text = stderrText
        stderrDone.enter()
        let done = stderrDone
        DispatchQueue.global().async {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                bytes.append(contentsOf: buffer[..<count])
                text.set(String(decoding: bytes, as: UTF8.self))
            }
            done.leave()
        }
        guard let line = ChildProcess.readLine(from: process.standardOutput!, timeout: .seconds(240)) else {
            stop()
            throw LiveError("menu-server printed no line within 240 s; stderr: \(stderrText.value)")
        }
        listeningLine = line
        let prefix = "menu-server listening on http://127.0.0.1:"
        guard line.hasPrefix(prefix), let port = Int(line.dropFirst(prefix.count)), (1 ... 65535).contains(port) else {
            stop()
            throw LiveError("unexpected first line \(String(reflecting: line))")
        }
        self.port = port
    }

    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// True once the child's stderr contains `text` (waited for at most `timeoutSeconds`): its
    /// stderr is read in the background, so a line it wrote before listening may still be on its way.
    package func stderrContains(_ text: String, timeoutSeconds: Int = 20) -> Bool {
        eventually(within: .seconds(timeoutSeconds), every: .milliseconds(10)) { stderrText.value.contains(text) }
    }

    /// Sends `signal` and waits (at most `timeoutSeconds`) for the exit; false if it had to be killed.
    package func signalAndWait(_ signal: Int32 = SIGTERM, timeoutSeconds: Double = 20) -> Bool {
        process.send(signal)
        let (ended, onItsOwn) = process.waitOrKill(timeout: .milliseconds(Int(timeoutSeconds * 1000)))
        termination = ended
        _ = stderrDone.wait(timeout: .now() + 30)  // returns at end of stream
        return onItsOwn
    }

    /// Everything the child wrote to stdout after the listening line (call after it exited).
    package func remainingStdout() -> String {
        String(decoding: ChildProcess.readToEnd(process.standardOutput!), as: UTF8.self)
    }

    /// Kills the child if it still runs (a failed test must not leave it behind).
    package func stop() {
        process.send(SIGKILL)
        _ = process.wait(timeout: .seconds(10))
        _ = stderrDone.wait(timeout: .now() + 30)  // returns at end of stream
    }

    deinit { stop() }
}
