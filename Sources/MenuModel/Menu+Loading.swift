import Foundation

extension Menu {
    /// Decodes and validates a menu config (see README "Config format"), then freezes it.
    ///
    /// Every problem found is reported at once, each with its JSON path and value.
    /// Cost: one `JSONDecoder` pass plus O(n) validation and layout; about 55 MB/s-bound work
    /// for a 1.1M-node file (see BENCHMARKS.md).
    public init(jsonData data: Data) throws(MenuConfigError) {
        let raw: RawMenu
        do {
            raw = try JSONDecoder().decode(RawMenu.self, from: data)
        } catch {
            throw MenuConfigError(problems: [Self.syntaxProblem(in: data, error: error)])
        }
        let builder = MenuBuilder(raw: raw)
        guard builder.problems.isEmpty else {
            throw MenuConfigError(problems: builder.problems, omittedCount: builder.omittedProblems)
        }
        self.init(storage: Storage(builder: builder, version: ContentHash.hex(of: data)))
    }

    /// Reads and loads a config file.
    public init(contentsOfFile path: String) throws(MenuConfigError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            throw MenuConfigError(problems: [ConfigProblem(path: "$", kind: .unreadable(reason: reason), value: path)])
        }
        try self.init(jsonData: data)
    }

    /// Where the JSON is broken. `JSONDecoder` gives no position on Linux, so on this (rare) path
    /// `JSONSerialization` is asked for the character offset, which becomes line and column.
    private static func syntaxProblem(in data: Data, error: any Error) -> ConfigProblem {
        var detail = "the file is not well-formed JSON"
        var line: Int?
        var column: Int?
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            let description = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? ""
            if !description.isEmpty { detail = description }
            if let offset = Self.characterOffset(in: description) {
                (line, column) = Self.lineAndColumn(of: offset, in: data)
            }
        }
        if case DecodingError.dataCorrupted(let context) = error, detail.isEmpty {
            detail = context.debugDescription
        }
        return ConfigProblem(path: "$", kind: .invalidJSON(line: line, column: column), value: detail)
    }

    private static func characterOffset(in description: String) -> Int? {
        guard let range = description.range(of: "character ") else { return nil }
        let digits = description[range.upperBound...].prefix(while: \.isNumber)
        return Int(digits)
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

/// FNV-1a, 64 bits, over the config bytes: the menu's `version`. Not cryptographic; it only has
/// to change when the content changes.
enum ContentHash {
    static func hex(of data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        data.withUnsafeBytes { bytes in
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01B3
            }
        }
        let text = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
