import Glibc
import Synchronization

/// The bearer tokens the admin API accepts, read from a file of one token a line (blank lines and
/// lines starting with `#` skipped), kept as digests only (``TokenDigest``). The file is read
/// again when it changes (another inode, size or modification time, looked at on each admin
/// request), so a token is rotated without a restart: add the new line, move the clients over,
/// remove the old line.
///
/// Invariant: at least one token; each 16 to ``maxTokenLength`` bytes of `token68`. A file that
/// becomes unreadable or invalid keeps the tokens read before (and the problem is reported once).
/// Cost: a `stat` per ``refresh()``; a match is one digest of the candidate and a constant-time
/// comparison with every token, whichever matches.
package final class AdminTokens: Sendable {
    /// The shortest token accepted: 16 bytes of `token68` (at least 96 bits from a random generator).
    package static let minTokenLength = 16
    package static let maxTokenLength = 512

    /// One accepted token.
    package struct Token: Sendable, Equatable {
        package let digest: TokenDigest
        /// Its line in the file, for messages (1-based).
        package let line: Int
        package var fingerprint: String { digest.fingerprint }
    }

    private struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var modifiedNanoseconds: Int64
    }

    private struct Loaded {
        /// The file as last looked at (nil: it was not there).
        var seen: FileIdentity?
        var tokens: [Token]
    }

    package let path: String
    private let loaded: Mutex<Loaded>

    /// Reads the token file; a missing, unreadable, empty or invalid file throws.
    package init(path: String) throws(AdminTokenFileError) {
        self.path = path
        let identity = Self.identity(of: path)
        loaded = Mutex(Loaded(seen: identity, tokens: try Self.read(path)))
    }

    /// The tokens now, in file order.
    package var tokens: [Token] { loaded.withLock { $0.tokens } }

    /// Reads the file again when it changed. Returns the problem when the changed file cannot be
    /// used (the tokens before stay), once per change; nil otherwise.
    @discardableResult
    package func refresh() -> AdminTokenFileError? {
        let identity = Self.identity(of: path)
        let changed = loaded.withLock { loaded in
            defer { loaded.seen = identity }
            return loaded.seen != identity
        }
        guard changed else { return nil }
        do {
            let tokens = try Self.read(path)
            loaded.withLock { $0.tokens = tokens }
            return nil
        } catch {
            return error
        }
    }

    /// The token `candidate` is, compared by digest with every token (no early exit).
    package func match(_ candidate: [UInt8]) -> Token? {
        let digest = TokenDigest(of: candidate)
        var found: Token?
        for token in tokens where token.digest.matches(digest) { found = token }
        return found
    }

    private static func identity(of path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileIdentity(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            modified: Int64(status.st_mtim.tv_sec), modifiedNanoseconds: Int64(status.st_mtim.tv_nsec))
    }

    /// The tokens of the file at `path`.
    static func read(_ path: String) throws(AdminTokenFileError) -> [Token] {
        let bytes = try readFile(path)
        var tokens: [Token] = []
        for (index, raw) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            var line = raw[...]
            while let last = line.last, last == 0x0D || last == 0x20 || last == 0x09 { line.removeLast() }
            while let first = line.first, first == 0x20 || first == 0x09 { line.removeFirst() }
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            guard line.count >= minTokenLength, line.count <= maxTokenLength else {
                throw .invalidToken(
                    path: path, line: index + 1,
                    "\(line.count) bytes; a token is \(minTokenLength) to \(maxTokenLength) bytes")
            }
            guard BearerCredentials.isToken68(line) else {
                throw .invalidToken(
                    path: path, line: index + 1, "a token is letters, digits and - . _ ~ + / followed by any =")
            }
            let token = Token(digest: TokenDigest(of: line), line: index + 1)
            if let earlier = tokens.first(where: { $0.digest == token.digest }) {
                throw .invalidToken(path: path, line: index + 1, "the same token as line \(earlier.line)")
            }
            tokens.append(token)
        }
        guard !tokens.isEmpty else { throw .noToken(path: path) }
        return tokens
    }

    private static func readFile(_ path: String) throws(AdminTokenFileError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .cannotRead(path: path, String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(path: path, String(cString: strerror(errno)))
            }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
            guard bytes.count <= 1 << 20 else { throw .cannotRead(path: path, "larger than 1 MiB") }
        }
    }
}

/// Why a token file cannot be used. Never quotes a token.
package enum AdminTokenFileError: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotRead(path: String, String)
    case noToken(path: String)
    case invalidToken(path: String, line: Int, String)

    package var description: String {
        switch self {
        case .cannotRead(let path, let reason): "cannot read admin token file \(path): \(reason)"
        case .noToken(let path):
            "admin token file \(path) holds no token (one a line; blank lines and # comments are skipped)"
        case .invalidToken(let path, let line, let reason): "admin token file \(path), line \(line): \(reason)"
        }
    }
}
