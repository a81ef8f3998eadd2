import MenuAvailability
import MenuModel

/// The strict parser of the `PUT /admin/availability` body, a batch of availability changes:
/// `{"changes": [{"id": "…", "state": "available"|"sold_out"|"paused", "until": "<RFC 3339>",
/// "reason": "…"}, …]}`, `until` and `reason` optional (or null).
///
/// Stricter than the session bodies, as an operator's tool should be: a key this grammar does not
/// know is refused (a typo such as `"untill"` must not drop the end time without a word), and so
/// is a key given twice at any depth. The whole body is first checked against the JSON grammar
/// (``ExpansionBodyParser``'s scanner: RFC 8259, unescaped keys compared); then the first wrong
/// value is named by its path (`changes[3].until`). An id has the form of a config id
/// (``Menu/isWellFormedID(_:)``); a reason is at most ``Availability/reasonLimit`` bytes of UTF-8
/// with no control character (it reaches pages, logs and terminals). Whether the menu has the ids
/// is the overlay's check (``AvailabilityOverlay/applying(_:on:now:)``), not this one.
///
/// Invariant: the scanner only moves forward; nesting is bounded by
/// ``ExpansionBodyParser/depthLimit``. Cost: two passes over the body, O(n) (the server's body
/// limit bounds it).
package struct AvailabilityBatchParser {
    /// Why the body was refused, before it is worded for the client.
    package enum Problem: Error, Equatable, Sendable {
        case empty
        case notJSON(offset: Int)
        case tooDeep
        case duplicateKey(String)
        case notAnObject(path: String)
        case notAnArray(path: String)
        case notAString(path: String)
        case unknownKey(String, path: String)
        case missingKey(String, path: String)
        case invalidID(path: String, found: String)
        case invalidState(path: String, found: String)
        case invalidUntil(path: String, reason: String)
        case invalidReason(path: String, reason: String)

        static let example =
            #"send {"changes": [{"id": "dry-braised-fish", "state": "sold_out", "until": "2026-12-06T19:30:00Z", "reason": "back at 19:30"}]}"#

        /// What the client is told (the `invalid_body` message).
        package var message: String {
            switch self {
            case .empty: "the body is empty; \(Self.example)"
            case .notJSON(let offset): "the body is not valid JSON (at byte \(offset)); \(Self.example)"
            case .tooDeep: "the body nests deeper than \(ExpansionBodyParser.depthLimit) levels; \(Self.example)"
            case .duplicateKey(let key):
                "the body has the key \"\(key.prefix(40))\" twice in one object (parsers disagree on which counts); send each key once"
            case .notAnObject(let path): "\(path) must be a JSON object; \(Self.example)"
            case .notAnArray(let path): "\(path) must be an array; \(Self.example)"
            case .notAString(let path): "\(path) must be a string"
            case .unknownKey(let key, let path):
                "\(path) has the key \"\(key.prefix(40))\", which is not one of "
                    + (path == "the body" ? "changes" : "id, state, until, reason")
            case .missingKey(let key, let path): "\(path) must have \"\(key)\""
            case .invalidID(let path, let found):
                "\(path) must be a node id, 1 to \(Menu.idLengthLimit) characters from A-Z a-z 0-9 . _ ~ -; found \"\(found.prefix(40))\""
            case .invalidState(let path, let found):
                "\(path) must be "
                    + AvailabilityState.settable.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                    + "; found \"\(found.prefix(40))\""
                    + (found == AvailabilityState.closed.rawValue
                        ? " (closed comes from the menu's opening hours: change \"hours\" in the config)" : "")
            case .invalidUntil(let path, let reason): "\(path): \(reason)"
            case .invalidReason(let path, let reason): "\(path) \(reason)"
            }
        }
    }

    private var scanner: ExpansionBodyParser

    private init(_ bytes: [UInt8]) { scanner = ExpansionBodyParser(bytes: bytes) }

    /// The changes `bytes` describe, in order.
    package static func parse(_ bytes: [UInt8]) throws(Problem) -> [AvailabilityOverlay.Change] {
        guard !bytes.isEmpty else { throw .empty }
        var grammar = ExpansionBodyParser(bytes: bytes)
        do {
            try grammar.value(depth: 0)
            try grammar.end()
        } catch .tooDeep {
            throw .tooDeep
        } catch .duplicateKey(let key) {
            throw .duplicateKey(key)
        } catch {
            throw .notJSON(offset: grammar.index)
        }
        var parser = AvailabilityBatchParser(bytes)
        return try parser.batch()
    }

    private mutating func batch() throws(Problem) -> [AvailabilityOverlay.Change] {
        var changes: [AvailabilityOverlay.Change]?
        try members(of: "the body") { parser, key throws(Problem) in
            guard key == "changes" else { throw .unknownKey(key, path: "the body") }
            changes = try parser.changeList()
        }
        guard let changes else { throw .missingKey("changes", path: "the body") }
        return changes
    }

    private mutating func changeList() throws(Problem) -> [AvailabilityOverlay.Change] {
        guard scanner.literal("[") else { throw .notAnArray(path: "changes") }
        var changes: [AvailabilityOverlay.Change] = []
        scanner.skipWhitespace()
        if scanner.literal("]") { return changes }
        while true {
            changes.append(try change(path: "changes[\(changes.count)]"))
            scanner.skipWhitespace()
            if scanner.literal(",") {
                scanner.skipWhitespace()
                continue
            }
            guard scanner.literal("]") else { throw .notJSON(offset: scanner.index) }
            return changes
        }
    }

    private mutating func change(path: String) throws(Problem) -> AvailabilityOverlay.Change {
        var id: String?
        var state: AvailabilityState?
        var until: Timestamp?
        var reason: String?
        try members(of: path) { parser, key throws(Problem) in
            let at = path + "." + key
            switch key {
            case "id":
                let text = try parser.text(at)
                guard Menu.isWellFormedID(text) else { throw .invalidID(path: at, found: text) }
                id = text
            case "state":
                let text = try parser.text(at)
                guard let value = AvailabilityState(rawValue: text), AvailabilityState.settable.contains(value) else {
                    throw .invalidState(path: at, found: text)
                }
                state = value
            case "until":
                guard let text = try parser.optionalText(at) else { return }
                do throws(Timestamp.Malformed) { until = try Timestamp(rfc3339: text) } catch {
                    throw .invalidUntil(path: at, reason: error.description)
                }
            case "reason":
                guard let text = try parser.optionalText(at) else { return }
                guard text.utf8.count <= Availability.reasonLimit else {
                    throw .invalidReason(
                        path: at, reason: "is \(text.utf8.count) bytes; at most \(Availability.reasonLimit)")
                }
                guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F ... 0x9F).contains($0.value) })
                else { throw .invalidReason(path: at, reason: "has a control character") }
                reason = text
            default: throw .unknownKey(key, path: path)
            }
        }
        guard let id else { throw .missingKey("id", path: path) }
        guard let state else { throw .missingKey("state", path: path) }
        return AvailabilityOverlay.Change(id: id, Availability(state: state, until: until, reason: reason))
    }

    /// The members of the object at the scanner, each key handed to `member` with the scanner at
    /// its value, which `member` must consume. The grammar was checked: only shapes can be wrong.
    private mutating func members(of path: String, _ member: (inout Self, String) throws(Problem) -> Void)
        throws(Problem)
    {
        scanner.skipWhitespace()
        guard scanner.literal("{") else { throw .notAnObject(path: path) }
        var first = true
        while let key = try step({ scanner throws(ExpansionBodyParser.Problem) in try scanner.nextKey(&first) }) {
            try member(&self, key)
        }
    }

    /// A string value at `path`.
    private mutating func text(_ path: String) throws(Problem) -> String {
        guard scanner.peek() == UInt8(ascii: "\"") else { throw .notAString(path: path) }
        return try step { scanner throws(ExpansionBodyParser.Problem) in try scanner.string() }
    }

    /// A string value at `path`, or nil for `null`.
    private mutating func optionalText(_ path: String) throws(Problem) -> String? {
        scanner.literal("null") ? nil : try text(path)
    }

    private mutating func step<Result>(
        _ body: (inout ExpansionBodyParser) throws(ExpansionBodyParser.Problem) -> Result
    )
        throws(Problem) -> Result
    {
        do { return try body(&scanner) } catch { throw .notJSON(offset: scanner.index) }
    }
}
