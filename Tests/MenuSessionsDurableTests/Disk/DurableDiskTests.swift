import DurableTestSupport
import Foundation
import HTTPCore
import MenuAppTestSupport
import MenuModel
import Testing

@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small file systems for the tests: a tmpfs that fills up, a read-only bind mount. Both need
/// the right to mount (root in the test container); without it the tests are skipped, and the
/// skip names the reason.
enum DurableMounts {
    static let mount = "/bin/mount"
    static let umount = "/bin/umount"

    /// Runs `command` with `arguments` (liveRun): its exit code (-1 if it could not start, did not
    /// end or a signal ended it) and its standard output followed by its standard error.
    @discardableResult
    static func run(_ command: String, _ arguments: [String]) -> (status: Int32, output: String) {
        do {
            let exit = try liveRun(URL(fileURLWithPath: command), arguments)
            return (exit.status, exit.stdout + exit.stderr)
        } catch {
            return (-1, "\(error)")
        }
    }

    /// Whether this process may mount a tmpfs (tried once, on a throwaway directory).
    static let canMount: Bool = {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        guard run(mount, ["-t", "tmpfs", "-o", "size=64k", "tmpfs", directory.path]).status == 0 else { return false }
        run(umount, [directory.path])
        return true
    }()

    static func tmpfs(at path: String, size: String) throws {
        let result = run(mount, ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        guard result.status == 0 else { throw DurableTestError("mount tmpfs: \(result.output)") }
    }

    static func readOnlyBind(_ path: String) throws {
        var result = run(mount, ["--bind", path, path])
        guard result.status == 0 else { throw DurableTestError("mount --bind: \(result.output)") }
        result = run(mount, ["-o", "remount,bind,ro", path])
        guard result.status == 0 else {
            run(umount, [path])
            throw DurableTestError("remount ro: \(result.output)")
        }
    }

    static func unmount(_ path: String) {
        run(umount, [path])
    }
}

@Suite("Durable: full and read-only disks")
struct DurableDiskTests {
    /// Fills the file system holding `path` with a file of that name; returns the bytes written.
    private func fill(_ path: String) -> Int {
        guard let file = fopen(path, "w") else { return 0 }
        defer { fclose(file) }
        let chunk = [UInt8](repeating: 0xAB, count: 1024)
        var total = 0
        while fwrite(chunk, 1, chunk.count, file) == chunk.count, fflush(file) == 0 { total += chunk.count }
        return total
    }

    @Test(
        "a full disk: writes answer unavailable (503), memory and journal stay unchanged, and recover when space returns",
        .enabled(if: DurableMounts.canMount, "mounting a tmpfs is not permitted here (the test needs root)"))
    func fullDiskRefusesWrites() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        try DurableMounts.tmpfs(at: directory.path, size: "64k")
        defer { DurableMounts.unmount(directory.path) }
        let menu = DurableFixtures.menu()
        let store = try durableOpen(directory, menu: menu, fsync: .always)
        let id = try store.create()
        let journal = directory.file(try #require(directory.journalNames.last))
        #expect(fill(directory.file("filler")) > 0)

        // Changes go into the journal's last page until it is full; the next one must fail.
        var failure: SessionStoreError?
        var before = SessionState()
        var sizeBefore = 0
        for step in 0 ..< 2000 {
            before = try store.state(of: id)
            sizeBefore = try durableRecordOffsets(journal).size
            if let error = durableError({ try store.apply(.toggle(groupID: DurableFixtures.groups[step % 5]), to: id) })
            {
                failure = error
                break
            }
        }
        #expect(durableIsUnavailable(failure), "\(String(describing: failure))")
        #expect(try store.state(of: id) == before)
        #expect(try durableRecordOffsets(journal).size == sizeBefore)  // the partial record was cut off
        // A record smaller than the toggle's (a creation) may still fit in the page; the page fills.
        var created: SessionStoreError?
        for _ in 0 ..< 200 {
            created = durableError { try store.create() }
            if created != nil { break }
        }
        #expect(durableIsUnavailable(created))
        #expect(durableIsUnavailable(durableError { try store.delete(id) }))
        #expect(try store.state(of: id) == before)  // not deleted

        // Through the service: 503 "unavailable", never a false 200.
        let service = MenuAPI(menu: menu, store: store)
        let response = service.respond(
            to: HTTPRequest(
                method: "POST", path: "/groups/a/toggle",
                headers: [("X-Session-Id", id.text)]))
        #expect(response.status == 503)
        #expect(String(decoding: response.body, as: UTF8.self).contains("\"unavailable\""))
        #expect(try store.state(of: id) == before)

        // Space comes back: writes succeed again, and a restart sees exactly what memory holds.
        try FileManager.default.removeItem(atPath: directory.file("filler"))
        let after = try store.apply(.toggle(groupID: "a"), to: id).state
        #expect(after != before)
        store.close()
        let reopened = try durableOpen(directory, menu: menu)
        defer { reopened.close() }
        #expect(reopened.recovery.repairs.isEmpty)
        #expect(try reopened.state(of: id) == after)
    }

    @Test(
        "a read-only data directory is a clear start-up error naming it",
        .enabled(if: DurableMounts.canMount, "mounting is not permitted here (the test needs root)"))
    func readOnlyDirectoryFailsAtStartup() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        try DurableMounts.readOnlyBind(directory.path)
        defer { DurableMounts.unmount(directory.path) }
        do {
            let store = try DurableSessionStore(directory: directory.path, menu: DurableFixtures.menu())
            store.close()
            Issue.record("opened a read-only directory")
        } catch {
            #expect(
                error.description
                    == "cannot use data directory \(directory.path): cannot write in it (Read-only file system)")
        }
    }
}
