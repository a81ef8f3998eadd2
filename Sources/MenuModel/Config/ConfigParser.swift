/// Reads a menu config in one pass over its bytes and feeds ``MenuBuilder`` node by node.
///
/// Why by hand: `JSONDecoder` into `Decodable` nodes took 14 s for a 1.1M-node (55 MB) menu on the
/// target machine, against a 2 s budget (docs/performance.md). This parser does the JSON grammar
/// (RFC 8259: strings with escapes and UTF-8 validation, numbers, literals, nesting) and nothing
/// else; the menu schema's checks stay in ``MenuBuilder``. O(bytes), no intermediate tree:
/// a node's position is fixed when its `{` is read, which is preorder whatever the key order.
struct ConfigParser {
    /// Where the JSON itself is broken; parsing stops there.
    struct SyntaxError: Error {
        var offset: Int
        var message: String
    }

    /// Nesting allowed inside attribute values (nodes have their own, smaller limit).
    static let valueDepthLimit = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// While a kept value is read: the steps from the node down to the value being read, so a
    /// repeated key inside it can be named. nil while a value is only skipped (already reported).
    private var keptPath: [JSONPathStep]?
    var builder: MenuBuilder

    init(bytes: UnsafeBufferPointer<UInt8>, builder: MenuBuilder) {
        self.bytes = bytes
        self.builder = builder
        // A UTF-8 byte order mark is allowed and ignored.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    }

    // MARK: The menu

    mutating func parseDocument() throws(SyntaxError) {
        skipWhitespace()
        var topLevel: [Int32] = []
        if peek() == UInt8(ascii: "{") {
            index += 1
            var sawItems = false
            var seen = KeySet.document
            var first = true
            while let key = try nextKey(&first) {
                if try isRepeated(key, in: &seen) { continue }
                switch key {
                case "title":
                    try parseTitle(of: 0)
                case "defaultLocale":
                    if let tag = try parseStringField(key: key) { builder.setDefaultLocale(tag) }
                case "locales":
                    try parseLocales()
                case "items":
                    sawItems = true
                    if peek() == UInt8(ascii: "[") {
                        topLevel = try parseNodeList(parent: 0, depth: 0)
                    } else {
                        try reportWrongType(key: key, expected: "an array of nodes")
                    }
                case "searchable":
                    try parseSearchable(key: key)
                case "timeZone":
                    if let name = try parseStringField(key: key) { builder.timeZoneName = name }
                default:
                    try reportUnknownKey(key)
                }
            }
            if !sawItems { builder.report(.init(key: nil, kind: .missingKey, value: "\"items\"")) }
        } else {
            try reportWrongType(key: nil, expected: "an object")
        }
        builder.endRoot(children: topLevel)
        builder.resolveLocales()
        builder.resolveTimeZone()
        skipWhitespace()
        guard index == bytes.count else {
            throw SyntaxError(offset: index, message: "unexpected text after the JSON document")
        }
    }

    /// `"searchable": ["attr", ...]`: the string attributes search reads beside titles.
    private mutating func parseSearchable(key: String) throws(SyntaxError) {
        let value = try parseValue(depth: 0)
        if case .array(let items) = value {
            let names = items.compactMap { item -> String? in
                if case .string(let name) = item, !name.isEmpty { name } else { nil }
            }
            if names.count == items.count {
                builder.searchable = names
                return
            }
        }
        builder.report(
            .init(
                key: key, kind: .wrongType(expected: "an array of attribute names (non-empty strings)"),
                value: value.excerpt()))
    }

    /// `[ NODE, ... ]`: returns the positions of the nodes added.
    private mutating func parseNodeList(parent: Int32, depth: Int) throws(SyntaxError) -> [Int32] {
        var positions: [Int32] = []
        index += 1  // "["
        var ordinal = 0
        while try nextElement(first: ordinal == 0) {
            builder.trail.append(ordinal)
            ordinal += 1
            if peek() == UInt8(ascii: "{") {
                if let position = try parseNode(parent: parent, depth: depth) { positions.append(position) }
            } else {
                try reportWrongType(key: nil, expected: "an object")
            }
            builder.trail.removeLast()
        }
        return positions
    }

    /// One node object; nil when the builder refused it (too deep, too many).
    private mutating func parseNode(parent: Int32, depth: Int) throws(SyntaxError) -> Int32? {
        guard let position = builder.beginNode(parent: parent, depth: depth) else {
            _ = try parseValue(depth: 0)
            return nil
        }
        index += 1  // "{"
        var sawID = false
        var sawTitle = false
        var expanded: Bool?
        var children: [Int32]?
        var seen = KeySet.node
        var first = true
        while let key = try nextKey(&first) {
            if try isRepeated(key, in: &seen) { continue }
            switch key {
            case "id":
                sawID = true
                if let id = try parseStringField(key: key) { builder.setID(id, of: position) }
            case "title":
                sawTitle = true
                try parseTitle(of: position)
            case "items":
                if peek() == UInt8(ascii: "[") {
                    children = try parseNodeList(parent: position, depth: depth + 1)
                } else {
                    try reportWrongType(key: key, expected: "an array of nodes")
                }
            case "expanded":
                if let value = try parseBoolField(key: key) { expanded = value }
            case "attributes":
                if peek() == UInt8(ascii: "{"), case .object(let values) = try parseKeptValue(at: "attributes") {
                    builder.setAttributes(values, of: position)
                } else {
                    try reportWrongType(key: key, expected: "an object")
                }
            case "minSelect", "maxSelect":
                builder.setSelectionBound(key, try parseKeptValue(at: key), of: position)
            case "hours":
                builder.setHours(try parseKeptValue(at: key), of: position)
            case "exceptions":
                builder.setExceptions(try parseKeptValue(at: key), of: position)
            case "whenUnavailable":
                builder.setWhenUnavailable(try parseKeptValue(at: key), of: position)
            default:
                try reportUnknownKey(key)
            }
        }
        builder.endNode(position, sawID: sawID, sawTitle: sawTitle, expanded: expanded, children: children)
        return position
    }

    /// A string value; any other value is reported as a wrong type and skipped.
    mutating func parseStringField(key: String) throws(SyntaxError) -> String? {
        if peek() == UInt8(ascii: "\"") { return try parseString() }
        try reportWrongType(key: key, expected: "a string")
        return nil
    }

    /// `true` or `false`; any other value is reported as a wrong type and skipped.
    private mutating func parseBoolField(key: String) throws(SyntaxError) -> Bool? {
        switch peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default:
            try reportWrongType(key: key, expected: "true or false")
            return nil
        }
    }

    mutating func reportWrongType(key: String?, expected: String) throws(SyntaxError) {
        let value = try parseValue(depth: 0)
        builder.report(.init(key: key, kind: .wrongType(expected: expected), value: value.excerpt()))
    }

    /// Whether `key` was already read in this object: then the repeat is reported and its value
    /// skipped, so the first value stands (and no node of a second `items` list is ever built).
    /// Unknown keys are not tracked; each occurrence is reported as unknown.
    private mutating func isRepeated(_ key: String, in seen: inout KeySet) throws(SyntaxError) -> Bool {
        guard let bit = seen.bit(of: key) else { return false }
        guard seen.contains(bit) else {
            seen.insert(bit)
            return false
        }
        builder.report(.init(key: key, kind: .duplicateKey, value: "\"\(key)\""))
        _ = try parseValue(depth: 0)
        return true
    }

    private mutating func reportUnknownKey(_ key: String) throws(SyntaxError) {
        builder.report(.init(key: key, kind: .unknownKey, value: "\"\(key)\""))
        _ = try parseValue(depth: 0)
    }

    // MARK: JSON grammar

    /// Inside an object (after `{`): reads the next member's key and its `:`, or the closing `}`
    /// (then nil). `first` tracks whether a `,` is due.
    mutating func nextKey(_ first: inout Bool) throws(SyntaxError) -> String? {
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
            try expect(UInt8(ascii: "}"), "expected ',' or '}' in an object")
            return nil
        }
        guard peek() == UInt8(ascii: "\"") else { throw SyntaxError(offset: index, message: "expected a quoted key") }
        let key = try parseString()
        skipWhitespace()
        try expect(UInt8(ascii: ":"), "expected ':' after a key")
        skipWhitespace()
        return key
    }

    /// Inside an array (after `[`): true when an element follows (positioned at it), false after
    /// the closing `]`.
    mutating func nextElement(first: Bool) throws(SyntaxError) -> Bool {
        skipWhitespace()
        if first {
            if peek() == UInt8(ascii: "]") {
                index += 1
                return false
            }
        } else if peek() == UInt8(ascii: ",") {
            index += 1
        } else {
            try expect(UInt8(ascii: "]"), "expected ',' or ']' in an array")
            return false
        }
        skipWhitespace()
        return true
    }

    /// A value the menu keeps (a node's `attributes`): as ``parseValue(depth:)``, and every key
    /// repeated inside it, at any depth, is reported with its path from `key`.
    private mutating func parseKeptValue(at key: String) throws(SyntaxError) -> JSONValue {
        keptPath = [.key(key)]
        defer { keptPath = nil }
        return try parseValue(depth: 0)
    }

    /// Any JSON value.
    mutating func parseValue(depth: Int) throws(SyntaxError) -> JSONValue {
        skipWhitespace()
        guard depth < Self.valueDepthLimit else {
            throw SyntaxError(offset: index, message: "nesting deeper than \(Self.valueDepthLimit)")
        }
        guard let byte = peek() else { throw SyntaxError(offset: index, message: "unexpected end of the document") }
        switch byte {
        case UInt8(ascii: "{"):
            index += 1
            var members: [String: JSONValue] = [:]
            var first = true
            while let key = try nextKey(&first) {
                keptPath?.append(.key(key))
                if members.updateValue(try parseValue(depth: depth + 1), forKey: key) != nil, let keptPath {
                    builder.report(.init(key: JSONPathStep.path(keptPath), kind: .duplicateKey, value: key.jsonQuoted))
                }
                keptPath?.removeLast()
            }
            return .object(members)
        case UInt8(ascii: "["):
            index += 1
            var elements: [JSONValue] = []
            while try nextElement(first: elements.isEmpty) {
                keptPath?.append(.index(elements.count))
                elements.append(try parseValue(depth: depth + 1))
                keptPath?.removeLast()
            }
            return .array(elements)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0") ... UInt8(ascii: "9"): return try parseNumber()
        default: throw SyntaxError(offset: index, message: "unexpected character '\(Unicode.Scalar(byte))'")
        }
    }

    private mutating func literal(_ word: StaticString) throws(SyntaxError) {
        let start = index
        for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
            guard peek() == expected else { throw SyntaxError(offset: start, message: "invalid literal") }
            index += 1
        }
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`: an integer when it has no fraction or
    /// exponent and fits `Int64` (and is not `-0`), otherwise its text as written; refused when no
    /// finite `Double` is that large.
    private mutating func parseNumber() throws(SyntaxError) -> JSONValue {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw SyntaxError(offset: index, message: "invalid number") }
        if first == UInt8(ascii: "0") {
            index += 1
        } else {
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let byte = peek(), isDigit(byte) else {
                throw SyntaxError(offset: index, message: "invalid number: digits must follow '.'")
            }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let byte = peek(), isDigit(byte) else {
                throw SyntaxError(offset: index, message: "invalid number: digits must follow the exponent")
            }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start ..< index]), as: UTF8.self)
        if isInteger, let value = Int64(text), value != 0 || text == "0" { return .integer(value) }
        guard JSONNumber.doubleInRange(text) != nil else {
            throw SyntaxError(offset: start, message: "number out of range")
        }
        return .number(JSONNumber(checkedText: text))
    }

    /// At `"`: the string's value, escapes resolved, UTF-8 checked.
    mutating func parseString() throws(SyntaxError) -> String {
        index += 1
        let start = index
        // Fast path: no escapes; ASCII needs no UTF-8 validation.
        var union: UInt8 = 0
        while let byte = peek(), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw SyntaxError(offset: index, message: "control character in a string") }
            union |= byte
            index += 1
        }
        guard let stop = peek() else { throw SyntaxError(offset: start - 1, message: "unterminated string") }
        if stop == UInt8(ascii: "\"") {
            let utf8 = UnsafeBufferPointer(rebasing: bytes[start ..< index])
            let text = union < 0x80 ? String(decoding: utf8, as: UTF8.self) : try makeString(utf8, at: start)
            index += 1
            return text
        }
        var buffer = Array(bytes[start ..< index])
        while true {
            guard let byte = peek() else { throw SyntaxError(offset: start - 1, message: "unterminated string") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return try buffer.withUnsafeBufferPointer { (utf8) throws(SyntaxError) in
                    try makeString(utf8, at: start)
                }
            case UInt8(ascii: "\\"):
                guard let escape = peek() else { throw SyntaxError(offset: index, message: "unterminated string") }
                index += 1
                if escape == UInt8(ascii: "u") {
                    buffer.append(contentsOf: try unicodeEscape())
                } else if let byte = JSONEscape.byte(for: escape) {
                    buffer.append(byte)
                } else {
                    throw SyntaxError(offset: index - 2, message: "invalid escape in a string")
                }
            default:
                guard byte >= 0x20 else {
                    throw SyntaxError(offset: index - 1, message: "control character in a string")
                }
                buffer.append(byte)
            }
        }
    }

    /// After `\u`: four hex digits (a surrogate pair takes two escapes), as UTF-8.
    private mutating func unicodeEscape() throws(SyntaxError) -> [UInt8] {
        let start = index - 2
        var scalar = try hex4()
        if (0xD800 ..< 0xDC00).contains(scalar) {
            guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw SyntaxError(offset: start, message: "unpaired surrogate in a \\u escape")
            }
            index += 2
            let low = try hex4()
            guard (0xDC00 ..< 0xE000).contains(low) else {
                throw SyntaxError(offset: start, message: "unpaired surrogate in a \\u escape")
            }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00 ..< 0xE000).contains(scalar) {
            throw SyntaxError(offset: start, message: "unpaired surrogate in a \\u escape")
        }
        return Array(String(Character(Unicode.Scalar(scalar)!)).utf8)
    }

    private mutating func hex4() throws(SyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0 ..< 4 {
            guard let byte = peek(), let digit = hexValue(byte) else {
                throw SyntaxError(offset: index, message: "invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func makeString(_ utf8: UnsafeBufferPointer<UInt8>, at offset: Int) throws(SyntaxError) -> String {
        guard let text = String(validating: utf8, as: UTF8.self) else {
            throw SyntaxError(offset: offset, message: "invalid UTF-8 in a string")
        }
        return text
    }

    // MARK: Bytes

    @inline(__always) func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    @inline(__always) private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8, _ message: String) throws(SyntaxError) {
        guard peek() == byte else { throw SyntaxError(offset: index, message: message) }
        index += 1
    }

    @inline(__always) private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
