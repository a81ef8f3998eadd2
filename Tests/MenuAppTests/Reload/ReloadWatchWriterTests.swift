// `--watch-config yes` against writers that take their time, on the built `menu-server`
// executable: the watcher must read the file once its writer is done, not half-way. The pauses
// below only give a wrong watcher the chance to read early; no assertion depends on their length.

import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuModel
import MenuTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A writer holding the config open: the first part written, the rest on ``finish()``.
private final class SlowConfigWriter {
    private let descriptor: Int32
    private let rest: [UInt8]

    init(path: String, flags: Int32, text: String) throws {
        descriptor = open(path, flags, 0o644)
        guard descriptor >= 0 else { throw LiveError("open \(path): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let half = bytes.count / 2
        rest = Array(bytes[half...])
        try Self.write(Array(bytes[..<half]), to: descriptor)
    }

    func finish() throws {
        try Self.write(rest, to: descriptor)
        close(descriptor)
    }

    private static func write(_ bytes: [UInt8], to descriptor: Int32) throws {
        guard bytes.withUnsafeBytes({ Glibc.write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
            throw LiveError("short write")
        }
    }
}

extension AppTests {
    @Suite("Live: --watch-config and slow writers")
    struct ReloadWatchWriterTests {
        @Test
        func aSlowInPlaceRewriteIsReadOnceItsWriterClosesTheFile() throws {
            let fixture = try ReloadFixture()
            let (child, firstVersion) = try fixture.serve(ReloadProcessTests.first, flags: ["--watch-config", "yes"])
            defer { child.stop() }

            let mark = child.logMark
            let writer = try SlowConfigWriter(
                path: fixture.configPath, flags: O_WRONLY | O_TRUNC, text: reloadMenu(ReloadProcessTests.second))
            Thread.sleep(forTimeInterval: 0.6)  // three debounce periods with the file half written
            try writer.finish()
            let second = try fixture.menu().version
            let log = child.awaitLog(
                after: mark,
                "menu-server: the config file changed: menu reloaded: version \(firstVersion) -> \(second), ")
            #expect(!log.contains("cannot reload"), "the half-written file was read:\n\(log)")
            #expect(try child.count().version == second)
            child.expectCleanStop()
        }

        /// The watcher once counted the config's IN_CREATE as a change, so a file created anew (after
        /// a delete, by `open(O_CREAT)` under the watched name) was read 200 ms after its creation
        /// while its writer was still writing, and the half file logged as invalid.
        @Test
        func aConfigCreatedAnewIsReadOnceItsWriterClosesIt() throws {
            let fixture = try ReloadFixture()
            let (child, firstVersion) = try fixture.serve(ReloadProcessTests.first, flags: ["--watch-config", "yes"])
            defer { child.stop() }

            var mark = child.logMark
            try FileManager.default.removeItem(atPath: fixture.configPath)
            child.awaitLog(after: mark, "cannot read \(fixture.configPath)")

            mark = child.logMark
            let writer = try SlowConfigWriter(
                path: fixture.configPath, flags: O_WRONLY | O_CREAT | O_EXCL,
                text: reloadMenu(ReloadProcessTests.second))
            // A correct watcher says nothing until the close: this wait then runs to its bound.
            let readHalfFile = eventually(within: .seconds(5)) { child.stderrText.value.utf8.count > mark }
            try writer.finish()
            let second = try fixture.menu().version
            let log = child.awaitLog(
                after: mark,
                "menu-server: the config file changed: menu reloaded: version \(firstVersion) -> \(second), ")
            #expect(!readHalfFile && !log.contains("cannot reload"), "the half-written file was read:\n\(log)")
            #expect(try child.count().version == second)
            child.expectCleanStop()
        }

        /// A hard link or a symlink made under the config's name has no writer to wait for: its
        /// creation is the change.
        @Test
        func aConfigLinkedIntoPlaceIsReadOnItsCreation() throws {
            let fixture = try ReloadFixture()
            let (child, firstVersion) = try fixture.serve(ReloadProcessTests.first, flags: ["--watch-config", "yes"])
            defer { child.stop() }
            var served = firstVersion
            for (name, nodes, hard) in [
                ("hard.json", ReloadProcessTests.second, true), ("soft.json", ReloadProcessTests.third, false)
            ] {
                let staged = fixture.directory.appendingPathComponent(name).path
                try Data(reloadMenu(nodes).utf8).write(to: URL(fileURLWithPath: staged))
                var mark = child.logMark
                try FileManager.default.removeItem(atPath: fixture.configPath)
                child.awaitLog(after: mark, "cannot read \(fixture.configPath)")
                mark = child.logMark
                #expect(
                    (hard ? link(staged, fixture.configPath) : symlink(name, fixture.configPath)) == 0,
                    "\(String(cString: strerror(errno)))")
                let version = try fixture.menu().version
                child.awaitLog(
                    after: mark,
                    "menu-server: the config file changed: menu reloaded: version \(served) -> \(version), ")
                #expect(try child.count().version == version)
                served = version
            }
            child.expectCleanStop()
        }
    }
}
