import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a file operation failed: the operation, the file and the `errno` text.
struct DurableIOError: Error, Sendable, Equatable, CustomStringConvertible {
    var operation: String
    var path: String
    var code: Int32

    init(_ operation: String, _ path: String, code: Int32 = errno) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// The `errno` text alone, without the path: what a client may be told.
    var reason: String { String(cString: strerror(code)) }
    var description: String { "\(operation) \(path): \(reason)" }
}

/// One open file descriptor and the POSIX calls the durable store makes on it.
///
/// Invariant: `descriptor` is open for exactly the lifetime of the object; it is closed in
/// `deinit` and nowhere else, so no call can reach a closed (or reused) descriptor while anyone
/// holds the object. The class is `Sendable` because every stored property is an immutable
/// `let` of a `Sendable` type; the system calls it makes are thread-safe, and callers that need
/// ordering (the journal's appends) serialize them with their own lock.
final class DurableFile: Sendable {
    let descriptor: Int32
    let path: String
    /// Whether ``tryLockExclusive()`` took the lock.
    private let isLocked = Atomic<Bool>(false)

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        // A flock belongs to the open file description, which a child process forked by another
        // thread shares until it execs: closing only our descriptor would leave the lock held
        // that long, and an immediate reopen (a restart in place) would find it taken.
        if isLocked.load(ordering: .relaxed) { _ = flock(descriptor, LOCK_UN) }
        close(descriptor)
    }

    /// Opens `path` with `flags` (`O_CLOEXEC` is always added).
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(DurableIOError) -> DurableFile {
        let descriptor = retryingOnInterrupt { Glibc_open(path, flags | O_CLOEXEC, mode) }
        guard descriptor >= 0 else { throw DurableIOError("open", path) }
        return DurableFile(descriptor: descriptor, path: path)
    }

    /// Writes all of `bytes` at `offset` (pwrite(2), repeated after short writes). On error part
    /// of the bytes may have been written: the caller truncates back.
    func write(_ bytes: [UInt8], at offset: Int64) throws(DurableIOError) {
        #if DEBUG
        try DurableFaults.before(.write, path: path, name: "write")
        #endif
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                retryingOnInterrupt {
                    pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
                }
            }
            guard written > 0 else { throw DurableIOError("write", path, code: written == 0 ? ENOSPC : errno) }
            done += written
        }
    }

    /// The whole file, read from the start.
    func readAll() throws(DurableIOError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(try size()))
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var offset: Int64 = 0
        while true {
            let count = chunk.withUnsafeMutableBytes { buffer in
                retryingOnInterrupt { pread(descriptor, buffer.baseAddress!, buffer.count, off_t(offset)) }
            }
            guard count >= 0 else { throw DurableIOError("read", path) }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0 ..< count])
            offset += Int64(count)
        }
    }

    func size() throws(DurableIOError) -> Int64 {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw DurableIOError("stat", path) }
        return Int64(status.st_size)
    }

    func truncate(to length: Int64) throws(DurableIOError) {
        guard retryingOnInterrupt({ ftruncate(descriptor, off_t(length)) }) == 0 else {
            throw DurableIOError("truncate", path)
        }
    }

    /// fdatasync(2): the data and the size are on disk when it returns.
    func syncData() throws(DurableIOError) {
        #if DEBUG
        try DurableFaults.before(.flush, path: path, name: "fdatasync")
        #endif
        #if canImport(Glibc)
        guard retryingOnInterrupt({ fdatasync(descriptor) }) == 0 else { throw DurableIOError("fdatasync", path) }
        #else
        try sync()
        #endif
    }

    /// fsync(2).
    func sync() throws(DurableIOError) {
        #if DEBUG
        try DurableFaults.before(.flush, path: path, name: "fsync")
        #endif
        guard retryingOnInterrupt({ fsync(descriptor) }) == 0 else { throw DurableIOError("fsync", path) }
    }

    /// flock(2) exclusive, without waiting; false when another open file holds it.
    func tryLockExclusive() throws(DurableIOError) -> Bool {
        if retryingOnInterrupt({ flock(descriptor, LOCK_EX | LOCK_NB) }) == 0 {
            isLocked.store(true, ordering: .relaxed)
            return true
        }
        if errno == EWOULDBLOCK { return false }
        throw DurableIOError("lock", path)
    }

    // MARK: Directory operations

    /// fsync of a directory, so that names created, renamed or removed in it are on disk.
    static func syncDirectory(_ path: String) throws(DurableIOError) {
        let directory = try open(path, O_RDONLY | O_DIRECTORY)
        try directory.sync()
    }

    /// rename(2): atomically replaces `destination`.
    static func rename(_ source: String, to destination: String) throws(DurableIOError) {
        guard Glibc_rename(source, destination) == 0 else { throw DurableIOError("rename", source) }
    }

    /// unlink(2); a file already gone is not an error.
    static func remove(_ path: String) throws(DurableIOError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw DurableIOError("remove", path) }
    }

    /// The names in a directory (without `.` and `..`).
    static func names(in path: String) throws(DurableIOError) -> [String] {
        guard let stream = opendir(path) else { throw DurableIOError("list", path) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// What is at `path`: `exists` false (and `isDirectory` false) when nothing is there or it
    /// cannot be examined, else whether it is a directory.
    static func kind(of path: String) -> (isDirectory: Bool, exists: Bool) {
        var status = stat()
        guard stat(path, &status) == 0 else { return (false, false) }
        return ((status.st_mode & S_IFMT) == S_IFDIR, true)
    }
}

@inline(__always)
private func retryingOnInterrupt<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}

// The module-level names `open` and `rename` are shadowed by the static methods above.
@inline(__always) private func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}

@inline(__always) private func Glibc_rename(_ source: String, _ destination: String) -> Int32 {
    rename(source, destination)
}
