import ChildProcess
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("ChildProcess: posix_spawn children for tests and benchmarks")
struct ChildProcessTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func runCapturesBothStreamsAndTheExitCode() throws {
        let outcome = try ChildProcess.run(executable: "/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"])
        #expect(outcome.termination == .exited(3))
        #expect(text(outcome.standardOutput) == "out\n")
        #expect(text(outcome.standardError) == "err\n")
        #expect(outcome.exitedOnItsOwn)
    }

    @Test func aChildKilledByASignalReportsTheSignal() throws {
        let outcome = try ChildProcess.run(executable: "/bin/sh", arguments: ["-c", "kill -TERM $$"])
        #expect(outcome.termination == .signaled(SIGTERM))
    }

    @Test func runKillsAChildThatOutlivesItsTimeout() throws {
        // Killed, not waited for: a child left to finish would have exited 0 after 30 s.
        let outcome = try ChildProcess.run(executable: "/bin/sleep", arguments: ["30"], timeout: .milliseconds(200))
        #expect(outcome.termination == .signaled(SIGKILL))
        #expect(!outcome.exitedOnItsOwn)
    }

    @Test func runReadsOutputLargerThanAPipeBuffer() throws {
        // 1 MiB on each stream: a child writing more than 64 KiB to a pipe nobody drains would block.
        let outcome = try ChildProcess.run(
            executable: "/bin/sh", arguments: ["-c", "head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2"])
        #expect(outcome.termination == .exited(0))
        #expect(outcome.standardOutput.count == 1_048_576)
        #expect(outcome.standardError.count == 1_048_576)
    }

    @Test func theChildGetsOnlyTheThreeStandardDescriptors() throws {
        let leaked = open("/dev/null", O_RDONLY)  // deliberately not close-on-exec
        #expect(leaked >= 3)
        defer { close(leaked) }
        let outcome = try ChildProcess.run(executable: "/bin/sh", arguments: ["-c", "ls /proc/$$/fd"])
        #expect(outcome.termination == .exited(0))
        #expect(text(outcome.standardOutput).split(separator: "\n").sorted() == ["0", "1", "2"])
    }

    @Test func theChildsStandardInputIsEmpty() throws {
        let outcome = try ChildProcess.run(executable: "/bin/cat", arguments: [], timeout: .seconds(10))
        #expect(outcome.termination == .exited(0))
        #expect(outcome.standardOutput.isEmpty)
    }

    @Test func theChildHasSIGPIPEAtItsDefaultEvenWhenThisProcessIgnoresIt() throws {
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        let outcome = try ChildProcess.run(executable: "/bin/grep", arguments: ["^SigIgn:", "/proc/self/status"])
        let mask =
            text(outcome.standardOutput).split(separator: "\t").last.map {
                UInt64($0.trimmingPrefix(" ").prefix(16), radix: 16)
            } ?? nil
        let ignored = try #require(mask)
        #expect(ignored & (1 << (UInt64(SIGPIPE) - 1)) == 0)
    }

    @Test func environmentAndWorkingDirectoryAreTheOnesGiven() throws {
        let outcome = try ChildProcess.run(
            executable: "/bin/sh", arguments: ["-c", "pwd; env"], environment: ["ONLY_THIS": "value"],
            workingDirectory: "/tmp")
        let lines = text(outcome.standardOutput).split(separator: "\n").map(String.init)
        #expect(lines.first == "/tmp")
        #expect(lines.contains("ONLY_THIS=value"))
        #expect(!lines.contains { $0.hasPrefix("HOME=") })
    }

    @Test func aMissingExecutableIsATypedError() {
        #expect(throws: ChildProcessError.self) {
            _ = try ChildProcess(executable: "/nonexistent/menu-server", arguments: [])
        }
    }

    @Test func waitReturnsNilWhileTheChildRunsAndSendDeliversSignals() throws {
        let child = try ChildProcess(executable: "/bin/sleep", arguments: ["30"])
        #expect(child.wait(timeout: .milliseconds(50)) == nil)
        #expect(child.isRunning)
        child.send(SIGTERM)
        #expect(child.wait(timeout: .seconds(10)) == .signaled(SIGTERM))
        #expect(!child.isRunning)
    }

    @Test func readLineReturnsTheFirstLineAndLeavesTheRest() throws {
        let child = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "echo first; echo second"], standardOutput: .pipe)
        let descriptor = try #require(child.standardOutput)
        #expect(ChildProcess.readLine(from: descriptor, timeout: .seconds(10)) == "first")
        #expect(String(decoding: ChildProcess.readToEnd(descriptor), as: UTF8.self) == "second\n")
        #expect(child.wait(timeout: .seconds(10)) == .exited(0))
    }

    /// The case Foundation's Process crashes on (swift-corelibs-foundation#5472): a process with
    /// thousands of open descriptors starting children from several threads at once.
    @Test func childrenStartWhileThousandsOfDescriptorsAreOpen() async throws {
        let held = (0 ..< 3_000).map { _ in open("/dev/null", O_RDONLY | O_CLOEXEC) }
        defer { held.forEach { close($0) } }
        #expect(held.allSatisfy { $0 >= 0 })
        let codes = try await withThrowingTaskGroup(of: ChildProcess.Termination.self) { group in
            for index in 0 ..< 64 {
                group.addTask {
                    try ChildProcess.run(executable: "/bin/sh", arguments: ["-c", "exit \(index % 7)"]).termination
                }
            }
            return try await group.reduce(into: [ChildProcess.Termination]()) { $0.append($1) }
        }
        #expect(codes.count == 64)
        #expect(Set(codes) == Set((0 ..< 7).map { ChildProcess.Termination.exited(Int32($0)) }))
    }
}
