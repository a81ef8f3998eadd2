#if DEBUG
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Test-build-only disk faults for ``DurableFile``: a test makes the writes or the flushes
/// (fdatasync/fsync) of the files in one directory stall until released, or fail with an
/// `errno`, to show what a slow or broken disk does to the server.
///
/// Invariant: rules only ever match files under the directory they were set for, so tests that
/// run in parallel in other directories are untouched; with no rule a call passes straight on.
/// Compiled only into debug builds (`swift build`, `swift test`): the release binary has neither
/// the hook nor its cost. In the test build each hooked call takes one lock.
enum DurableFaults {
    enum Operation: Sendable, Hashable {
        /// pwrite(2) of ``DurableFile/write(_:at:)``.
        case write
        /// fdatasync(2)/fsync(2) of ``DurableFile/syncData()`` and ``DurableFile/sync()``.
        case flush
    }

    private struct Rule {
        var stalled = false
        var failure: Int32?
    }

    private struct State {
        var rules: [String: [Operation: Rule]] = [:]
        /// Calls now blocked in a stall, by directory.
        var waiting: [String: Int] = [:]
    }

    private static let condition = NSCondition()
    nonisolated(unsafe) private static var state = State()

    /// Makes `operation` on files in `directory` block until ``release(_:in:)``.
    static func stall(_ operation: Operation, in directory: String) {
        update(operation, in: directory) { $0.stalled = true }
    }

    /// Lets calls stalled in `directory` go on (and later ones pass).
    static func release(_ operation: Operation, in directory: String) {
        update(operation, in: directory) { $0.stalled = false }
    }

    /// Makes `operation` on files in `directory` fail with `code` (e.g. `EIO`), until ``clear(in:)``.
    static func fail(_ operation: Operation, in directory: String, code: Int32) {
        update(operation, in: directory) { $0.failure = code }
    }

    /// Removes every rule of `directory` and releases its stalled calls.
    static func clear(in directory: String) {
        condition.lock()
        state.rules[directory] = nil
        condition.broadcast()
        condition.unlock()
    }

    /// How many calls are blocked in a stall in `directory` now.
    static func stalledCalls(in directory: String) -> Int {
        condition.lock()
        defer { condition.unlock() }
        return state.waiting[directory, default: 0]
    }

    private static func update(_ operation: Operation, in directory: String, _ change: (inout Rule) -> Void) {
        condition.lock()
        change(&state.rules[directory, default: [:]][operation, default: Rule()])
        condition.broadcast()
        condition.unlock()
    }

    /// Called by ``DurableFile`` before `operation` on `path`: waits while a stall rule holds,
    /// then throws the rule's failure, if any.
    static func before(_ operation: Operation, path: String, name: String) throws(DurableIOError) {
        condition.lock()
        defer { condition.unlock() }
        guard !state.rules.isEmpty else { return }
        guard let directory = state.rules.keys.first(where: { path.hasPrefix($0 + "/") || path == $0 }) else { return }
        state.waiting[directory, default: 0] += 1
        while state.rules[directory]?[operation]?.stalled == true { condition.wait() }
        state.waiting[directory, default: 0] -= 1
        if let code = state.rules[directory]?[operation]?.failure { throw DurableIOError(name, path, code: code) }
    }
}
#endif
