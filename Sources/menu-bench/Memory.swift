import Foundation
import Glibc
import MenuModel
import MenuService
import MenuSessions
import NaiveReference
import Synchronization

/// Resident memory of this process, from /proc/self/status.
enum ResidentMemory {
    /// A `kB` field of /proc/self/status (`VmRSS`, `VmHWM`), in bytes.
    static func bytes(_ field: String) -> Int {
        let status = try! String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }!
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }!
        return kilobytes * 1024
    }

    /// Current resident size after returning free heap pages to the system, so it counts what
    /// is held rather than what malloc kept around.
    static func trimmedRSS() -> Int {
        _ = mallocTrim(0)
        return bytes("VmRSS")
    }

    /// glibc's `malloc_trim(3)`, which the Glibc module does not import (malloc.h), found by name.
    private static let mallocTrim: @convention(c) (Int) -> Int32 = {
        unsafeBitCast(dlsym(nil, "malloc_trim")!, to: (@convention(c) (Int) -> Int32).self)
    }()
}

/// Resident memory added by many sessions, each a few toggles away from the default, held the way
/// the server's store holds them: an ``SessionState`` and a last-used time under a 16-byte id.
enum SessionMemory {
    struct Key: Hashable {
        var high: UInt64
        var low: UInt64
    }

    struct Entry {
        var state: SessionState
        var lastUsed: SessionTime
    }

    /// Runs `menu-bench --session-memory path sessions changes` and reads the bytes it added.
    static func inChildProcess(_ path: String, sessions: Int, changes: Int) throws -> Int {
        let fields = try BenchChild.run(["--session-memory", path, String(sessions), String(changes)], fields: 1)
        guard let bytes = Int(fields[0]) else { throw BenchError.childFailed(fields[0]) }
        return bytes
    }

    /// Loads the menu, then builds the sessions on a thread of their own, as the server's request
    /// threads do. A new thread allocates from its own malloc arena: on the loading thread, the
    /// sessions would fill the holes the decoder's freed temporaries left, and a 1.1M-node menu's
    /// holes hide most of 100k sessions (11 MB measured there, against 98 MB here).
    static func measureHere(_ path: String, sessions: Int, changes: Int) -> String {
        let menu: Menu
        do {
            menu = try Menu(contentsOfFile: path)
        } catch {
            return "error: \(error)"
        }
        let result = Mutex<Int>(0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let bytes = bytesAdded(menu: menu, sessions: sessions, changes: changes, seed: 7)
            result.withLock { $0 = bytes }
            done.signal()
        }
        done.wait()
        return String(result.withLock { $0 })
    }

    /// Bytes added by `sessions` sessions of `changes` random toggles each.
    static func bytesAdded(menu: Menu, sessions: Int, changes: Int, seed: UInt64) -> Int {
        var rng = SplitMix64(state: seed)
        let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
        let before = ResidentMemory.trimmedRSS()
        var store: [Key: Entry] = [:]
        let now = SessionClock.now()
        for _ in 0 ..< sessions {
            var view = FlattenedView(menu: menu)
            for _ in 0 ..< changes { _ = try! view.toggle(groups.randomElement(using: &rng)!) }
            store[Key(high: rng.next(), low: rng.next())] = Entry(state: view.state, lastUsed: now)
        }
        return withExtendedLifetime(store) { ResidentMemory.trimmedRSS() - before }
    }
}
