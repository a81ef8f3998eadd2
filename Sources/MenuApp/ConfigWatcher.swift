import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Calls `changed` when a file is written or replaced, debounced: `--watch-config`.
///
/// Watches the file's directory with inotify (not the file itself, whose inode a
/// rename-into-place or a Kubernetes ConfigMap's `..data` symlink swap replaces) for a finished
/// write, a creation, a rename into it or a deletion of the file's name (or of `..data`), then
/// waits until `quiet` has passed with no further such event before calling `changed` once, on its
/// own thread. Editors that write in several steps, and `cp` over the file, give one reload.
/// ``stop()`` ends the thread within one poll interval (100 ms).
final class ConfigWatcher: Sendable {
    private let descriptor: Int32
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts watching; throws when inotify cannot watch the directory (the server then refuses to start).
    init(path: String, quiet: Duration = .milliseconds(200), changed: @escaping @Sendable () -> Void)
        throws(ConfigWatchError)
    {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        #if canImport(Glibc)
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { throw ConfigWatchError(path: path, reason: String(cString: strerror(errno))) }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB)
        guard inotify_add_watch(descriptor, directory, mask) >= 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ConfigWatchError(path: path, reason: "cannot watch \(directory): \(reason)")
        }
        self.descriptor = descriptor
        let thread = Thread { [self] in
            run(directory: directory, names: [name, "..data"], quiet: quiet, changed: changed)
            finished.signal()
        }
        thread.name = "menu-server config watcher"
        thread.start()
        #else
        throw ConfigWatchError(path: path, reason: "--watch-config needs inotify (Linux)")
        #endif
    }

    /// Stops watching; returns once the thread has ended (a reload it started has finished).
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
        close(descriptor)
    }

    #if canImport(Glibc)
    private func run(directory: String, names: Set<String>, quiet: Duration, changed: @Sendable () -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var due: ContinuousClock.Instant?
        while !stopped.load(ordering: .acquiring) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready > 0, Self.drain(descriptor, into: &buffer, directory: directory, names: names) {
                due = .now + quiet
            }
            if let deadline = due, ContinuousClock.now >= deadline {
                due = nil
                changed()
            }
        }
    }

    /// Reads every queued event; true when one names a watched name. Creating a regular file with
    /// one link (`open(O_CREAT)`) does not count: its writer may still be writing, and its close
    /// (IN_CLOSE_WRITE) follows. A symlink or a hard link made under the name counts at once.
    private static func drain(_ descriptor: Int32, into buffer: inout [UInt8], directory: String, names: Set<String>)
        -> Bool
    {
        var matched = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return matched }
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= count {
                    let length = Int(bytes.loadUnaligned(fromByteOffset: offset + header - 4, as: UInt32.self))
                    let nameBytes = bytes[(offset + header) ..< min(count, offset + header + length)]
                    let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    // A lost event (the queue overflowed) may have been the config's: count it as a change.
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { matched = true }
                    if names.contains(name),
                        !(mask & UInt32(IN_CREATE) != 0 && isNewRegularFile(directory + "/" + name))
                    {
                        matched = true
                    }
                    offset += header + length
                }
            }
        }
    }

    /// A regular file with one link: just created by `open`, not linked into place.
    private static func isNewRegularFile(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG && status.st_nlink == 1
    }
    #endif
}

/// Why `--watch-config` cannot watch the config file.
struct ConfigWatchError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "--watch-config: cannot watch \(path): \(reason)" }
}
