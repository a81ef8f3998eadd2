// Helpers for the durable session store tests (the store's own and the live ones). Every name
// starts with `Durable` so it cannot clash with helpers of other test files.

import Foundation
import MenuModel
import MenuSessions
import MenuSessionsDurable
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

package enum DurableFixtures {
    /// Groups a, ag, b, bg, c (a and bg expanded by default); rows a1, ag1, ag2, bg1, b1, c1, r.
    package static let menuJSON = """
        {"title": "T", "items": [
          {"id": "a", "title": "A", "expanded": true, "items": [
            {"id": "a1", "title": "A1"},
            {"id": "ag", "title": "AG", "items": [{"id": "ag1", "title": "AG1"}, {"id": "ag2", "title": "AG2"}]}]},
          {"id": "b", "title": "B", "items": [
            {"id": "bg", "title": "BG", "expanded": true, "items": [{"id": "bg1", "title": "BG1"}]},
            {"id": "b1", "title": "B1"}]},
          {"id": "c", "title": "C", "items": [{"id": "c1", "title": "C1"}]},
          {"id": "r", "title": "R"}
        ]}
        """
    package static let groups = ["a", "ag", "b", "bg", "c"]

    package static func menu(_ json: String = menuJSON) -> Menu {
        try! Menu(jsonData: Data(json.utf8))
    }
}

/// A fresh directory under the system temporary directory, removed by `remove()`.
package struct DurableTemporaryDirectory {
    package let path: String

    package init(in parent: String = NSTemporaryDirectory()) {
        var template = Array(((parent as NSString).appendingPathComponent("menu-durable-XXXXXX")).utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package func file(_ name: String) -> String { path + "/" + name }

    package func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// Names and sizes of the files in the directory.
    package var fileSizes: [String: Int] { Self.sizes(in: path) }

    package static func sizes(in path: String) -> [String: Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        var sizes: [String: Int] = [:]
        for name in names {
            if let size = (try? FileManager.default.attributesOfItem(atPath: path + "/" + name))?[.size] as? Int {
                sizes[name] = size
            }
        }
        return sizes
    }

    package var journalNames: [String] {
        fileSizes.keys.filter { $0.hasPrefix("journal-") && !$0.contains(".") }.sorted()
    }
}

/// Collects what a store logs.
package final class DurableLogRecorder: Sendable {
    package init() {}
    private let storage = Mutex<[String]>([])
    package var lines: [String] { storage.withLock { $0 } }
    package var log: @Sendable (String) -> Void { { [self] line in storage.withLock { $0.append(line) } } }
}

/// A session clock and a wall clock that move together, by hand.
package final class DurableTestClock: Sendable {
    package init() {}
    private let start = SessionClock.now()
    private let elapsed = Atomic<Int64>(0)  // milliseconds
    package let wallStart: Int64 = 1_700_000_000_000

    package func advance(_ duration: Duration) {
        elapsed.add(Int64(duration / .milliseconds(1)), ordering: .relaxed)
    }

    package var clock: @Sendable () -> SessionTime {
        { [self] in start.advanced(byMilliseconds: elapsed.load(ordering: .relaxed)) }
    }

    package var wall: @Sendable () -> Int64 { { [self] in wallStart + elapsed.load(ordering: .relaxed) } }
}

/// Opens a store with test-friendly defaults.
package func durableOpen(
    _ directory: DurableTemporaryDirectory, menu: Menu = DurableFixtures.menu(), fsync: FsyncPolicy = .no,
    timeToLive: Duration = .seconds(3600), compactionMinimumBytes: Int64 = 4 << 20,
    log: DurableLogRecorder = DurableLogRecorder(), clock: DurableTestClock? = nil
) throws -> DurableSessionStore {
    if let clock {
        return try DurableSessionStore(
            directory: directory.path, menu: menu, fsync: fsync, timeToLive: timeToLive,
            compactionMinimumBytes: compactionMinimumBytes, log: log.log,
            clock: clock.clock, wallClock: clock.wall)
    }
    return try DurableSessionStore(
        directory: directory.path, menu: menu, fsync: fsync, timeToLive: timeToLive,
        compactionMinimumBytes: compactionMinimumBytes, log: log.log)
}

/// The error a store call threw, nil when it returned.
package func durableError<T>(_ body: () throws -> T) -> SessionStoreError? {
    do {
        _ = try body()
        return nil
    } catch let error as SessionStoreError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

package func durableIsUnavailable(_ error: SessionStoreError?) -> Bool {
    if case .unavailable? = error { return true }
    return false
}

/// Every group's expansion in a state, by id: what a comparison across menus or processes uses.
package func durableExpansion(_ state: SessionState, menu: Menu = DurableFixtures.menu()) -> [String: Bool] {
    let view = FlattenedView(menu: menu, state: state)
    var result: [String: Bool] = [:]
    for node in menu.nodes where menu.isGroup(node) { result[menu.id(of: node)] = view.isExpanded(node) }
    return result
}

/// A `data` directory and the fixture menu's config in `directory`, and the `menu-server`
/// arguments that use them with `policy` on port 0.
package func durableServerFiles(in directory: DurableTemporaryDirectory, fsync policy: FsyncPolicy) throws -> (
    data: String, arguments: [String]
) {
    let data = directory.file("data")
    try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
    let config = directory.file("menu.json")
    try DurableFixtures.menuJSON.write(toFile: config, atomically: true, encoding: .utf8)
    return (data, ["--port", "0", "--data-dir", data, "--fsync", policy.rawValue, "--config", config])
}

package struct DurableTestError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
