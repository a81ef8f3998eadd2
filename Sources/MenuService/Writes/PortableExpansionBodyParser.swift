import MenuModel

/// The strict parser of the `POST /sessions` body, a portable expansion:
/// `{"base": "default"|"expanded"|"collapsed", "marks": [{"id", "mode": "expanded"|"collapsed"}],
/// "expanded": [ids], "collapsed": [ids], "selection": {"all": true|false, "toggled": [ids]}}`,
/// every key optional (`base` defaults to `default`, the selection to none).
///
/// The grammar on top of ``ExpansionBodyParser``'s scanner (one scanner, two grammars): the whole
/// body is checked against RFC 8259, strings are unescaped before they are compared, and a key
/// given twice in one object is refused, at any depth (inside an ignored value too). Unknown keys are ignored, at the top and in a mark, as
/// that parser does, except `expansion`: a client that posts the whole `GET /session`
/// answer would otherwise get the default state without a word. An id must have the form of a
/// config id (``Menu/isWellFormedID(_:)``: 1 to 128 characters of A-Z a-z 0-9 . _ ~ -); the same
/// id twice in one list, or in both `expanded` and `collapsed`, is refused (which one counts
/// would be a guess). Grammar errors are reported
/// first (with their byte offset), then the first wrong value, named by its path
/// (`expanded[3]`, `marks[0].mode`).
///
/// Invariant: the scanner only moves forward; nesting is bounded by
/// ``ExpansionBodyParser/depthLimit``. Cost: one pass over the body, O(n), and one set of the ids
/// (the body limit the server enforces, 64 KiB, bounds both).
struct PortableExpansionBodyParser {
    /// Why the body was refused, before it is worded for the client.
    enum Problem: Error, Equatable {
        case notJSON(offset: Int)
        case tooDeep
        case notAnObject(path: String)
        case duplicateKey(String, path: String)
        case wrapped
        case notAString(path: String)
        case notABoolean(path: String)
        case notAnArray(path: String)
        case invalidMode(path: String, allowed: [ExpansionMode])
        case invalidID(path: String, found: String)
        case missingKey(String, path: String)
        case duplicateID(String, first: String, second: String)

        /// What the client is told (the `invalid_body` message).
        var message: String {
            let shape =
                #"send {"base": "default", "marks": [{"id": "soups", "mode": "collapsed"}], "expanded": ["noodles"], "collapsed": [], "selection": {"all": false, "toggled": ["rice"]}} (every key optional)"#
            return switch self {
            case .notJSON(let offset): "the body is not valid JSON (at byte \(offset)); \(shape)"
            case .tooDeep:
                "the body nests arrays or objects deeper than \(ExpansionBodyParser.depthLimit) levels; \(shape)"
            case .notAnObject(let path): "\(path) must be a JSON object; \(shape)"
            case .duplicateKey(let key, let path):
                "\(path) has the key \"\(key.prefix(40))\" more than once (parsers disagree on which one counts); send each key once"
            case .wrapped:
                "the body has the key \"expansion\": send the value of \"expansion\" from GET /session (the object with base, marks, expanded and collapsed), not the whole answer"
            case .notAString(let path): "\(path) must be a string; \(shape)"
            case .notABoolean(let path): "\(path) must be true or false; \(shape)"
            case .notAnArray(let path): "\(path) must be an array; \(shape)"
            case .invalidMode(let path, let allowed):
                "\(path) must be " + allowed.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
            case .invalidID(let path, let found):
                "\(path) must be a group id, 1 to \(Menu.idLengthLimit) characters from A-Z a-z 0-9 . _ ~ -; found \"\(found.prefix(40))\""
            case .missingKey(let key, let path): "\(path) must have \"\(key)\"; \(shape)"
            case .duplicateID(let id, let first, let second):
                "the id \"\(id.prefix(40))\" is both \(first) and \(second); name each group once (in expanded or in collapsed, once in marks)"
            }
        }
    }

    /// The scanner's own problems (grammar and depth), turned into this grammar's by ``scan(_:)``.
    private typealias Scan = ExpansionBodyParser.Problem

    private var scanner: ExpansionBodyParser
    /// The first wrong value (grammar errors are thrown at once, this at the end).
    private var problem: Problem?
    /// Where each flipped id and each marked id was given, to refuse a repeat.
    private var flipPaths: [String: String] = [:]
    private var markPaths: [String: String] = [:]

    /// The expansion `bytes` describe; an empty body is the default expansion.
    static func parse(_ bytes: [UInt8]) throws(Problem) -> PortableState {
        guard !bytes.isEmpty else { return PortableState() }
        var parser = PortableExpansionBodyParser(scanner: ExpansionBodyParser(bytes: bytes))
        return try parser.document()
    }

    private init(scanner: ExpansionBodyParser) { self.scanner = scanner }

    private mutating func document() throws(Problem) -> PortableState {
        var expansion = PortableState()
        var expanded: [PortableState.Flip] = []
        var collapsed: [PortableState.Flip] = []
        try object(path: "the body", depth: 0) { parser, key throws(Problem) in
            switch key {
            case "base":
                if let mode = try parser.mode(path: "base", allowed: ExpansionMode.allCases) { expansion.base = mode }
            case "marks":
                try parser.array(path: "marks", depth: 1) { parser, path throws(Problem) in
                    if let mark = try parser.mark(path: path) { expansion.marks.append(mark) }
                }
            case "expanded", "collapsed":
                let isExpanded = key == "expanded"
                try parser.array(path: key, depth: 1) { parser, path throws(Problem) in
                    guard let id = try parser.id(path: path) else { return }
                    if let first = parser.flipPaths.updateValue(path, forKey: id) {
                        parser.note(.duplicateID(id, first: first, second: path))
                    }
                    let flip = PortableState.Flip(id: id, isExpanded: isExpanded)
                    if isExpanded { expanded.append(flip) } else { collapsed.append(flip) }
                }
            case "selection":
                expansion.selection = try parser.selection(path: "selection")
            case "expansion":
                parser.note(.wrapped)
                try parser.skip(key, depth: 1)
            default:
                try parser.skip(key, depth: 1)
            }
        }
        try scan { scanner throws(Scan) in try scanner.end() }
        if let problem { throw problem }
        expansion.flips = expanded + collapsed
        return expansion
    }

    /// The selection object, `{"all": true|false, "toggled": [ids]}` (both optional); the empty
    /// selection when it is wrong (noted). An id twice in `toggled` is refused.
    private mutating func selection(path: String) throws(Problem) -> PortableSelection {
        var selection = PortableSelection()
        guard scanner.peek() == UInt8(ascii: "{") else {
            note(.notAnObject(path: path))
            try skip(path, depth: 1)
            return selection
        }
        var toggledPaths: [String: String] = [:]
        try object(path: path, depth: 1) { parser, key throws(Problem) in
            switch key {
            case "all":
                if parser.scanner.literal("true") {
                    selection.all = true
                } else if parser.scanner.literal("false") {
                    selection.all = false
                } else {
                    parser.note(.notABoolean(path: path + ".all"))
                    try parser.skip(path + ".all", depth: 2)
                }
            case "toggled":
                try parser.array(path: path + ".toggled", depth: 2) { parser, elementPath throws(Problem) in
                    guard let id = try parser.id(path: elementPath) else { return }
                    if let first = toggledPaths.updateValue(elementPath, forKey: id) {
                        parser.note(.duplicateID(id, first: first, second: elementPath))
                    }
                    selection.toggled.append(id)
                }
            default: try parser.skip(path + "." + key, depth: 2)
            }
        }
        return selection
    }

    /// One mark object, `{"id": …, "mode": "expanded"|"collapsed"}`; nil when it is wrong (noted).
    private mutating func mark(path: String) throws(Problem) -> PortableState.Mark? {
        guard scanner.peek() == UInt8(ascii: "{") else {
            note(.notAnObject(path: path))
            try skip(path, depth: 2)
            return nil
        }
        var id: String?
        var mode: ExpansionMode?
        var complete = true
        try object(path: path, depth: 2) { parser, key throws(Problem) in
            switch key {
            case "id":
                id = try parser.id(path: path + ".id")
                complete = complete && id != nil
            case "mode":
                mode = try parser.mode(path: path + ".mode", allowed: [.expanded, .collapsed])
                complete = complete && mode != nil
            default: try parser.skip(path + "." + key, depth: 3)
            }
        }
        guard complete else { return nil }
        guard let id else {
            note(.missingKey("id", path: path))
            return nil
        }
        guard let mode else {
            note(.missingKey("mode", path: path))
            return nil
        }
        if let first = markPaths.updateValue(path, forKey: id) { note(.duplicateID(id, first: first, second: path)) }
        return PortableState.Mark(id: id, mode: mode)
    }

    /// The members of the object at the scanner (`{` next), each key handed to `member` with the
    /// scanner at its value, which `member` must consume. A key twice is refused at once.
    private mutating func object(
        path: String, depth: Int,
        _ member: (inout Self, String) throws(Problem) -> Void
    ) throws(Problem) {
        scanner.skipWhitespace()
        guard scanner.peek() == UInt8(ascii: "{") else {
            try skip(path, depth: depth)  // a grammar error is reported as such, before "not an object"
            try scan { scanner throws(Scan) in try scanner.end() }
            throw .notAnObject(path: path)
        }
        guard depth < ExpansionBodyParser.depthLimit else { throw .tooDeep }
        _ = scanner.literal("{")
        var keys = Set<String>()
        var first = true
        while let key = try scan({ scanner throws(Scan) in try scanner.nextKey(&first) }) {
            guard keys.insert(key).inserted else { throw .duplicateKey(key, path: path) }
            try member(&self, key)
        }
    }

    /// The elements of the array at the scanner, each handed to `element` with its path
    /// (`name[i]`) and the scanner at it; anything but an array is noted and skipped.
    private mutating func array(
        path name: String, depth: Int,
        _ element: (inout Self, String) throws(Problem) -> Void
    ) throws(Problem) {
        guard scanner.literal("[") else {
            note(.notAnArray(path: name))
            try skip(name, depth: depth)
            return
        }
        guard depth < ExpansionBodyParser.depthLimit else { throw .tooDeep }
        scanner.skipWhitespace()
        if scanner.literal("]") { return }
        var position = 0
        while true {
            scanner.skipWhitespace()
            try element(&self, "\(name)[\(position)]")
            position += 1
            scanner.skipWhitespace()
            if scanner.literal(",") { continue }
            guard scanner.literal("]") else { throw .notJSON(offset: scanner.index) }
            return
        }
    }

    /// The string at the scanner; nil (noted) when the value is another kind.
    private mutating func text(path: String, depth: Int) throws(Problem) -> String? {
        guard scanner.peek() == UInt8(ascii: "\"") else {
            note(.notAString(path: path))
            try skip(path, depth: depth)
            return nil
        }
        return try scan { scanner throws(Scan) in try scanner.string() }
    }

    /// A group id: a string of the form of a config id; nil (noted) otherwise.
    private mutating func id(path: String) throws(Problem) -> String? {
        guard let id = try text(path: path, depth: 3) else { return nil }
        guard Menu.isWellFormedID(id) else {
            note(.invalidID(path: path, found: id))
            return nil
        }
        return id
    }

    /// One of `allowed` by its name; nil (noted) otherwise.
    private mutating func mode(path: String, allowed: [ExpansionMode]) throws(Problem) -> ExpansionMode? {
        guard let name = try text(path: path, depth: 3) else { return nil }
        guard let mode = ExpansionMode(rawValue: name), allowed.contains(mode) else {
            note(.invalidMode(path: path, allowed: allowed))
            return nil
        }
        return mode
    }

    /// Skips the value at `path`, checking its grammar and that no object in it has a key twice.
    private mutating func skip(_ path: String, depth: Int) throws(Problem) {
        try scan(within: path) { scanner throws(Scan) in try scanner.value(depth: depth) }
    }

    /// Keeps the first wrong value, reported once the whole body has been read.
    private mutating func note(_ found: Problem) {
        if problem == nil { problem = found }
    }

    /// Runs one scanner step, turning its problems into this grammar's (a grammar error with the
    /// offset the scanner stopped at; a key twice in an object nested at `path`, named by it).
    private mutating func scan<Result>(
        within path: String = "the body",
        _ step: (inout ExpansionBodyParser) throws(Scan) -> Result
    ) throws(Problem) -> Result {
        do {
            return try step(&scanner)
        } catch .tooDeep {
            throw .tooDeep
        } catch .duplicateKey(let key) {
            throw .duplicateKey(key, path: path == "the body" ? path : "\(path) (or an object nested in it)")
        } catch {
            throw .notJSON(offset: scanner.index)
        }
    }
}
