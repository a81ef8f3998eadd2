import Glibc

/// The rules of one IANA time zone: its UTC offset at any instant, read from a TZif file of the
/// machine's time zone database (Foundation on Linux answers from ICU's bundled copy instead).
///
/// Invariant: `changes` ascend strictly by time and each changes the offset from the one before
/// (the first from `initialOffset`); the footer rules apply only after `lastTransition`.
/// Immutable and `Sendable`. Cost: parsing is linear in the file (a few kilobytes); `offset(at:)`
/// and `nextTransition(after:)` are a binary search in the table, or past it a few civil-date
/// computations of the footer rules.
public struct ZoneRules: Sendable, Equatable {
    public let name: String
    /// The offset before the first transition: time type 0 (RFC 8536 section 3.2).
    let initialOffset: Int
    /// The transitions that change the offset, ascending.
    let changes: [Change]
    /// The last transition in the file, whether or not it changed the offset; the footer rules
    /// take over after it (everywhere when nil).
    let lastTransition: Int64?
    /// The footer's POSIX TZ rules (TZif v2+), nil for v1 or an empty footer.
    let footer: PosixTimeZone?

    /// From `time` on, local time is `time + offset`.
    struct Change: Sendable, Equatable {
        let time: Int64
        let offset: Int
    }

    /// The largest file read: real TZif files are a few kilobytes.
    static let maxFileSize = 1 << 20

    /// Parses TZif (RFC 8536) version 1, 2, 3 or 4 bytes. For v2+ uses the 64-bit data block and
    /// the footer POSIX TZ string (for instants after the last transition). Leap seconds are ignored.
    public init(tzif bytes: [UInt8], name: String) throws(ZoneRulesError) {
        let data = try TZifData(parsing: bytes, name: name)
        self.name = name
        initialOffset = data.offsets[0]
        var changes: [Change] = []
        for (time, type) in zip(data.times, data.types)
        where data.offsets[type] != (changes.last?.offset ?? initialOffset) {
            changes.append(Change(time: time, offset: data.offsets[type]))
        }
        self.changes = changes
        lastTransition = data.times.last
        footer = data.footer
    }

    /// Reads `<directory>/<name>`. `name` must be an IANA-style name: 1-64 bytes of A-Z a-z 0-9 / _ + -
    /// (no leading '/', no '..' component, no empty component); otherwise `.invalidName`.
    public static func load(
        named name: String, directory: String = ZoneRules.defaultDirectory
    ) throws(ZoneRulesError) -> ZoneRules {
        guard isValidName(name) else { throw .invalidName(name) }
        let path = directory.isEmpty || directory.hasSuffix("/") ? directory + name : directory + "/" + name
        return try ZoneRules(tzif: readFile(path, name: name, directory: directory), name: name)
    }

    /// $TZDIR if set and non-empty, else /usr/share/zoneinfo.
    public static var defaultDirectory: String {
        guard let value = getenv("TZDIR"), value.pointee != 0 else { return "/usr/share/zoneinfo" }
        return String(cString: value)
    }

    /// The UTC offset in seconds (local = utc + offset) at Unix time `t` (seconds).
    public func offset(at t: Int64) -> Int {
        if let footer, lastTransition.map({ t > $0 }) ?? true { return footer.offset(at: t) }
        let index = changesUpTo(t)
        return index == 0 ? initialOffset : changes[index - 1].offset
    }

    /// The first instant strictly after `t` at which the offset changes (a transition whose offset
    /// equals the previous one is skipped), or nil when none ever does.
    public func nextTransition(after t: Int64) -> Int64? {
        let index = changesUpTo(t)
        if index < changes.count { return changes[index].time }
        guard let footer else { return nil }
        var cursor = max(t, lastTransition ?? .min)
        // Standard and daylight time alternate, so a change is at most a candidate or two away;
        // rules that never change the offset (permanent daylight time) give up after three years.
        for _ in 0 ..< 6 {
            guard let candidate = footer.nextTransition(after: cursor) else { return nil }
            if offset(at: candidate) != offset(at: candidate - 1) { return candidate }
            cursor = candidate
        }
        return nil
    }

    /// How many changes happen at or before `t`.
    private func changesUpTo(_ t: Int64) -> Int {
        var low = 0
        var high = changes.count
        while low < high {
            let middle = (low + high) / 2
            if changes[middle].time <= t { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private static let nameBytes = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_+-".utf8)

    static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1 ... 64).contains(bytes.count), bytes.allSatisfy(nameBytes.contains) else { return false }
        return bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).allSatisfy {
            !$0.isEmpty && !$0.elementsEqual("..".utf8)
        }
    }

    private static func readFile(_ path: String, name: String, directory: String) throws(ZoneRulesError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .notFound(name: name, directory: directory) }
            throw .unreadable(path: path, reason: String(cString: strerror(code)))
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            guard count > 0 else {
                let code = errno
                if code == EINTR { continue }
                throw .unreadable(path: path, reason: String(cString: strerror(code)))
            }
            bytes += chunk[0 ..< count]
            guard bytes.count <= maxFileSize else {
                throw .malformed(name: name, detail: "\(path) is larger than \(maxFileSize) bytes, no TZif file is")
            }
        }
    }
}

/// Why a zone's rules could not be read; each message says what to change.
public enum ZoneRulesError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidName(String)
    case notFound(name: String, directory: String)
    case unreadable(path: String, reason: String)
    case malformed(name: String, detail: String)

    public var description: String {
        switch self {
        case .invalidName(let name):
            return "\"\(name.prefix(80))\" is not a time zone name: use an IANA name such as Europe/Paris or "
                + "America/New_York (1 to 64 bytes of letters, digits, '/', '_', '+' and '-', "
                + "no leading '/' and no empty or '..' component)"
        case .notFound(let name, let directory):
            return "no time zone \(name) in \(directory): check the name (e.g. Europe/Paris), install the "
                + "time zone database (apt-get install tzdata), or set TZDIR to a directory of TZif files"
        case .unreadable(let path, let reason):
            return "cannot read the time zone file \(path): \(reason); check its permissions, or set TZDIR "
                + "to another time zone database"
        case .malformed(let name, let detail):
            return "the time zone file of \(name) is not valid TZif (RFC 8536): \(detail); reinstall the time "
                + "zone database (apt-get install --reinstall tzdata) or set TZDIR to an intact one"
        }
    }
}
