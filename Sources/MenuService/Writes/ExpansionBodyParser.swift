import MenuModel

/// The strict parser of the write bodies: `PUT /groups/{id}/expansion`'s
/// `{"isExpanded": true|false, "recursive": true|false}` (``GroupBody``), `PUT /expansion`'s
/// `{"all": "expanded"|"collapsed"|"default"}` (``parseAll(_:)``), `PUT /nodes/{id}/selection`'s
/// `{"selected": true|false}` and `PUT /selection`'s `{"all": true|false}` (``parseSelection(_:of:)``).
///
/// Checks the whole body against the JSON grammar (RFC 8259: UTF-8, no trailing bytes, escapes and
/// surrogate pairs well formed) and refuses a key given twice in one object, at any depth (the
/// body's own keys and those of any object nested in an ignored value), compared after unescaping
/// (`"isExpanded"` and `"is\u0045xpanded"` are the same key): JSON parsers disagree on which copy
/// counts (Foundation keeps the first, JavaScript and Python the last), so a client and the server
/// could read different values. Keys a body does not name are allowed and ignored.
///
/// Invariant: `index` only moves forward, never past `bytes.count`; nesting is bounded by
/// ``depthLimit``, so no input recurses without limit. Cost: one pass over the body, O(n), and one
/// set of keys per object (the 64 KiB body limit bounds them).
struct ExpansionBodyParser {
    /// Deepest nesting of arrays and objects inside ignored values.
    static let depthLimit = 64

    private let bytes: [UInt8]
    private(set) var index = 0

    /// The `PUT /groups/{id}/expansion` body: the state to set, and whether for the whole subtree.
    struct GroupBody: Equatable, Sendable {
        var isExpanded: Bool
        var recursive: Bool
    }

    /// Which body a message describes: its example is part of every refusal.
    enum Body: Sendable {
        case group
        case all
        case nodeSelection
        case allSelection

        var example: String {
            switch self {
            case .group: "{\"isExpanded\": true} or {\"isExpanded\": false, \"recursive\": true}"
            case .all: "{\"all\": \"expanded\"}, {\"all\": \"collapsed\"} or {\"all\": \"default\"}"
            case .nodeSelection: "{\"selected\": true} or {\"selected\": false}"
            case .allSelection: "{\"all\": true} or {\"all\": false}"
            }
        }

        /// The key whose boolean a selection body carries.
        var selectionKey: String { self == .allSelection ? "all" : "selected" }
    }

    /// Why the body was refused, before it is worded for the client.
    enum Problem: Error, Equatable {
        case empty
        case notJSON
        case tooDeep
        case notAnObject
        case duplicateKey(String)
        case missingKey(String)
        /// The key's value is of the wrong type or not one of the values it takes.
        case wrongValue(key: String)

        /// What the client is told (the `invalid_body` message) about a `body`.
        func message(for body: Body) -> String {
            switch self {
            case .empty: "the body must be JSON like \(body.example); it is empty"
            case .notJSON: "the body is not valid JSON; send \(body.example)"
            case .tooDeep:
                "the body nests arrays or objects deeper than \(ExpansionBodyParser.depthLimit) levels; send \(body.example)"
            case .notAnObject: "the body must be a JSON object like \(body.example)"
            case .duplicateKey(let key):
                "the body has the key \"\(key.prefix(40))\" more than once in one object (parsers disagree on which one counts); send each key once"
            case .missingKey(let key): "the body must have \"\(key)\"; send \(body.example)"
            case .wrongValue(let key):
                switch (key, body) {
                case ("all", .all): "\"all\" must be \"expanded\", \"collapsed\" or \"default\""
                default: "\"\(key)\" must be true or false; send \(body.example)"
                }
            }
        }
    }

    /// A top-level member's value as the bodies read it: a boolean, a string, or anything else
    /// (checked against the grammar, then skipped).
    private enum Member {
        case bool(Bool)
        case string(String)
        case other
    }

    /// The `PUT /groups/{id}/expansion` body in `bytes` (`recursive` false when absent).
    static func parse(_ bytes: [UInt8]) throws(Problem) -> GroupBody {
        let members = try members(of: bytes)
        func flag(_ key: String) throws(Problem) -> Bool? {
            switch members[key] {
            case nil: nil
            case .bool(let value): value
            case .string, .other: throw .wrongValue(key: key)
            }
        }
        let isExpanded = try flag("isExpanded")
        let recursive = try flag("recursive")
        guard let isExpanded else { throw .missingKey("isExpanded") }
        return GroupBody(isExpanded: isExpanded, recursive: recursive ?? false)
    }

    /// The mode of the `PUT /expansion` body in `bytes`.
    static func parseAll(_ bytes: [UInt8]) throws(Problem) -> ExpansionMode {
        switch try members(of: bytes)["all"] {
        case nil: throw .missingKey("all")
        case .string(let text): if let mode = ExpansionMode(rawValue: text) { return mode }
        case .bool, .other: break
        }
        throw .wrongValue(key: "all")
    }

    /// The boolean of a selection body in `bytes`: `selected` (``Body/nodeSelection``) or `all`
    /// (``Body/allSelection``).
    static func parseSelection(_ bytes: [UInt8], of body: Body) throws(Problem) -> Bool {
        let key = body.selectionKey
        switch try members(of: bytes)[key] {
        case nil: throw .missingKey(key)
        case .bool(let value): return value
        case .string, .other: throw .wrongValue(key: key)
        }
    }

    /// The top-level members of the object in `bytes`, each key once.
    private static func members(of bytes: [UInt8]) throws(Problem) -> [String: Member] {
        guard !bytes.isEmpty else { throw .empty }
        var parser = ExpansionBodyParser(bytes: bytes)
        return try parser.document()
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func document() throws(Problem) -> [String: Member] {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else {
            try value(depth: 0)  // a grammar error is reported as such, before "not an object"
            try end()
            throw .notAnObject
        }
        index += 1
        var members: [String: Member] = [:]
        var first = true
        while let key = try nextKey(&first) {
            guard members[key] == nil else { throw .duplicateKey(key) }
            if literal("true") {
                members[key] = .bool(true)
            } else if literal("false") {
                members[key] = .bool(false)
            } else if peek() == UInt8(ascii: "\"") {
                members[key] = .string(try string())
            } else {
                try value(depth: 1)
                members[key] = .other
            }
        }
        try end()
        return members
    }

    /// Only whitespace may follow the top-level value.
    mutating func end() throws(Problem) {
        skipWhitespace()
        guard index == bytes.count else { throw .notJSON }
    }

    /// Inside an object: the next member's key (after its `:`), or nil after the closing `}`.
    mutating func nextKey(_ first: inout Bool) throws(Problem) -> String? {
        skipWhitespace()
        if first {
            first = false
            if peek() == UInt8(ascii: "}") {
                index += 1
                return nil
            }
        } else if peek() == UInt8(ascii: ",") {
            index += 1
            skipWhitespace()
        } else {
            guard peek() == UInt8(ascii: "}") else { throw .notJSON }
            index += 1
            return nil
        }
        let key = try string()
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else { throw .notJSON }
        index += 1
        skipWhitespace()
        return key
    }

    /// Skips one JSON value of any kind.
    mutating func value(depth: Int) throws(Problem) {
        skipWhitespace()
        guard let byte = peek() else { throw .notJSON }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < Self.depthLimit else { throw .tooDeep }
            index += 1
            let isObject = byte == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            skipWhitespace()
            if peek() == close {
                index += 1
                return
            }
            var keys = Set<String>()
            while true {
                if isObject {
                    let key = try string()
                    guard keys.insert(key).inserted else { throw .duplicateKey(key) }
                    skipWhitespace()
                    guard peek() == UInt8(ascii: ":") else { throw .notJSON }
                    index += 1
                }
                try value(depth: depth + 1)
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    index += 1
                    skipWhitespace()
                    continue
                }
                guard peek() == close else { throw .notJSON }
                index += 1
                return
            }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): guard literal("true") else { throw .notJSON }
        case UInt8(ascii: "f"): guard literal("false") else { throw .notJSON }
        case UInt8(ascii: "n"): guard literal("null") else { throw .notJSON }
        default: try number()
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() throws(Problem) {
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw .notJSON }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let digit = peek(), isDigit(digit) else { throw .notJSON }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), isDigit(digit) else { throw .notJSON }
            skipDigits()
        }
    }

    /// A quoted string, unescaped; invalid UTF-8, a control character, a bad escape or a lone
    /// surrogate is not JSON.
    mutating func string() throws(Problem) -> String {
        guard peek() == UInt8(ascii: "\"") else { throw .notJSON }
        index += 1
        var utf8: [UInt8] = []
        while let byte = peek() {
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else { throw .notJSON }
                return text
            case UInt8(ascii: "\\"):
                guard let escape = peek() else { throw .notJSON }
                index += 1
                if escape == UInt8(ascii: "u") {
                    utf8.append(contentsOf: try unicodeEscape())
                } else if let byte = JSONEscape.byte(for: escape) {
                    utf8.append(byte)
                } else {
                    throw .notJSON
                }
            case 0 ..< 0x20: throw .notJSON
            default: utf8.append(byte)
            }
        }
        throw .notJSON
    }

    /// The UTF-8 of a `\uXXXX` escape (the `\u` read), joining a surrogate pair.
    private mutating func unicodeEscape() throws(Problem) -> [UInt8] {
        var scalar = try hex4()
        if (0xD800 ..< 0xDC00).contains(scalar) {
            guard literal("\\u") else { throw .notJSON }
            let low = try hex4()
            guard (0xDC00 ..< 0xE000).contains(low) else { throw .notJSON }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw .notJSON }  // a lone low surrogate
        return Array(String(Character(unicode)).utf8)
    }

    private mutating func hex4() throws(Problem) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0 ..< 4 {
            guard let byte = peek() else { throw .notJSON }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a") ... UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A") ... UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .notJSON
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// Consumes `word` when the bytes at `index` spell it.
    mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        let matches = word.withUTF8Buffer { word in
            (0 ..< count).allSatisfy { bytes[index + $0] == word[$0] }
        }
        if matches { index += count }
        return matches
    }

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) { index += 1 }
    }

    mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }
}
