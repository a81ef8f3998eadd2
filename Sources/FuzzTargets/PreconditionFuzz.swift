// The `preconditions` fuzz target: the input's first line as an If-None-Match value, the other
// lines as If-Match lines. A parsed list must print and parse back to itself, the revision the
// first line's tags name must be what its parsed list names, and a read and a
// write carrying the headers must get a well-formed answer (never a 5xx).

import HTTPCore
import MenuService

extension FuzzTarget {
    static func checkPreconditions(_ bytes: [UInt8]) -> String? {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        for values in [Array(lines.prefix(1)), Array(lines.dropFirst())] where !values.isEmpty {
            guard let parsed = try? EntityTagCondition(values: values) else { continue }
            // Printed as bytes: an obs-text byte (0x80-0xFF) is not UTF-8 on its own.
            let printed =
                parsed.matchesAny
                ? Array("*".utf8)
                : Array(
                    parsed.tags.map { Array(($0.isWeak ? "W/\"" : "\"").utf8) + $0.opaque + [UInt8(ascii: "\"")] }
                        .joined(separator: Array(", ".utf8)))
            guard (try? EntityTagCondition(values: [printed])) == parsed else {
                return "\(parsed) does not parse back from its text"
            }
        }
        // The in-place If-None-Match scan agrees with the parsed list, for a tag it names and one it does not.
        let first = Array(lines.first ?? [])
        let request = HTTPRequest(method: "GET", path: "/count", query: [], headers: [])
        var raw = request
        raw.headers = HTTPFields([(name: "if-none-match", value: String(decoding: first, as: UTF8.self))])
        let parsed = try? EntityTagCondition(values: [Array(String(decoding: first, as: UTF8.self).utf8)])
        for current in [parsed?.tags.first?.opaque ?? [], Array("no-such-tag".utf8)].map(SessionEntityTag.init(opaque:))
        {
            let scanned = try? EntityTagCondition.noneMatchFails(in: raw, current: current)
            guard scanned == parsed.map({ $0.noneMatchFails(current: current) }) else {
                return
                    "If-None-Match scan says \(String(describing: scanned)), the parsed list \(String(describing: parsed))"
            }
        }
        // The in-place revision scan (read-your-writes) agrees with the parsed list too.
        let known = KnownRevision.inNoneMatch(of: raw)
        guard known == parsed.flatMap(KnownRevision.highest(in:)) else {
            return
                "If-None-Match revision scan says \(String(describing: known)), the parsed list \(String(describing: parsed))"
        }
        func text(_ line: [UInt8]) -> String { String(decoding: line, as: UTF8.self) }
        let read = HTTPRequest(method: "GET", path: "/count", headers: [("If-None-Match", text(lines.first ?? []))])
        if let problem = checkAnswer(service.respond(to: read)) { return "GET /count: \(problem)" }
        let write = HTTPRequest(
            method: "POST", path: "/groups/g/toggle", headers: lines.dropFirst().map { ("If-Match", text($0)) })
        if let problem = checkAnswer(service.respond(to: write)) { return "POST toggle: \(problem)" }
        return nil
    }
}
