import Foundation

extension Menu {
    /// Decodes and validates a menu config (see docs/config.md), then freezes it.
    ///
    /// Every problem found is reported at once, each with its JSON path and value.
    /// Cost: one pass over the bytes (``ConfigParser``) plus O(n) layout; docs/performance.md (Start-up)
    /// has the figures for a 1.1M-node file.
    public init(jsonData data: Data) throws(MenuConfigError) {
        try self.init(jsonData: data, maxNodes: MenuBuilder.nodeLimit)
    }

    /// As ``init(jsonData:)`` with a smaller node limit (tests).
    init(jsonData data: Data, maxNodes: Int) throws(MenuConfigError) {
        // About 50 bytes of JSON per node in typical menus: reserve once instead of regrowing.
        let outcome: Result<MenuBuilder, ConfigParser.SyntaxError> = data.withUnsafeBytes { raw in
            var parser = ConfigParser(
                bytes: raw.bindMemory(to: UInt8.self),
                builder: MenuBuilder(expectedNodes: data.count / 50, maxNodes: maxNodes))
            do throws(ConfigParser.SyntaxError) {
                try parser.parseDocument()
                return .success(parser.builder)
            } catch {
                return .failure(error)
            }
        }
        let builder: MenuBuilder
        switch outcome {
        case .success(let built): builder = built
        case .failure(let error):
            let (line, column) = Self.lineAndColumn(of: error.offset, in: data)
            throw MenuConfigError(problems: [
                ConfigProblem(path: "$", kind: .invalidJSON(line: line, column: column), value: error.message)
            ])
        }
        guard builder.problems.isEmpty else {
            throw MenuConfigError(problems: builder.problemsWithNodeIDs, omittedCount: builder.omittedProblems)
        }
        // Nothing the builder derived is trusted unchecked: a broken tree is refused here, at load,
        // never met by a page read.
        do throws(MenuBuilder.StructureViolation) {
            try builder.verifyStructure()
        } catch {
            let id = MenuBuilder.isValidID(builder.ids[error.node]) ? " (id \"\(builder.ids[error.node])\")" : ""
            throw MenuConfigError(problems: [
                ConfigProblem(
                    path: "$", kind: .inconsistentStructure(detail: error.detail), value: "node \(error.node)\(id)")
            ])
        }
        self.init(storage: Storage(builder: builder, version: ContentHash.hex(of: data)))
    }

    /// Reads and loads a config file; one that cannot be read is refused saying why in plain
    /// words (`cannot read menu.json: no such file`).
    public init(contentsOfFile path: String) throws(MenuConfigError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw MenuConfigError(problems: [
                ConfigProblem(path: "$", kind: .unreadable(reason: Self.reason(error)), value: path)
            ])
        }
        try self.init(jsonData: data)
    }

    /// Why a file could not be read, from the system's error number under Foundation's error.
    static func reason(_ error: any Error) -> String {
        guard let posix = (error as NSError).userInfo[NSUnderlyingErrorKey] as? POSIXError else {
            return (error as NSError).localizedDescription
        }
        switch posix.code {
        case .ENOENT: return "no such file"
        case .EACCES, .EPERM: return "permission denied"
        case .EISDIR: return "it is a directory; give the menu's JSON file"
        case .ENOTDIR: return "a part of the path is not a directory"
        case .ENAMETOOLONG: return "the path is too long"
        case .ELOOP: return "too many symbolic links in the path"
        case .EIO: return "input/output error"
        case .ENOMEM: return "not enough memory"
        default: return String(cString: strerror(posix.code.rawValue)).lowercased()
        }
    }

    private static func lineAndColumn(of offset: Int, in data: Data) -> (Int, Int) {
        var line = 1
        var column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}

/// The menu's `version`: a 64-bit FNV-1a-style hash over the config bytes, eight bytes per step
/// (one step per byte of the tail). Not cryptographic; it only has to change when the content does.
enum ContentHash {
    static func hex(of data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let prime: UInt64 = 0x0000_0100_0000_01B3
        data.withUnsafeBytes { bytes in
            let words = bytes.count / 8
            for word in 0 ..< words {
                hash = (hash ^ bytes.loadUnaligned(fromByteOffset: word * 8, as: UInt64.self)) &* prime
                hash ^= hash >> 29
            }
            for byte in bytes[(words * 8)...] { hash = (hash ^ UInt64(byte)) &* prime }
        }
        let text = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
