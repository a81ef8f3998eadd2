import Foundation
import MenuTestSupport

/// The parts of `openapi.yaml` the contract tests check, read line by line (the document keeps to
/// block YAML, with example values and `x-` members written as one JSON flow value each, which
/// may span lines indented under its key).
struct OpenAPIDocument {
    /// One entry under an `examples:` map of a response (in `paths` or `components/responses`) or
    /// of `components/examples`: its members as written, by key.
    struct Example {
        var path: [String]
        var members: [String: String]
        var name: String { path.last ?? "" }

        /// A member as JSON (`value`, `x-request`, `x-headers`), nil when absent.
        func json(_ key: String) throws -> Any? {
            guard let text = members[key] else { return nil }
            do {
                return try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
            } catch {
                throw OpenAPIDocumentError(
                    "example \(path.joined(separator: "/")): \(key) is not one JSON value: \(text)")
            }
        }
    }

    let lines: [Substring]

    init() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    }

    private static func indent(_ line: Substring) -> Int { line.prefix { $0 == " " }.count }

    /// `key` of a `key:` or `key: value` line (after the indent), nil for other lines.
    private static func key(_ line: Substring) -> Substring? {
        let body = line.drop { $0 == " " }
        guard let colon = body.firstIndex(of: ":"), !body.hasPrefix("-"), !body.hasPrefix("#") else { return nil }
        let key = body[..<colon]
        guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || "_-'/{}.$".contains($0) }) else {
            return nil
        }
        let rest = body[body.index(after: colon)...]
        return rest.isEmpty || rest.hasPrefix(" ") ? key : nil
    }

    /// Every example of a response or of `components/examples`, with its members.
    func responseExamples() -> [Example] {
        var examples: [Example] = []
        var stack: [(indent: Int, key: String)] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            guard let key = Self.key(line) else {
                index += 1
                continue
            }
            let indent = Self.indent(line)
            while let last = stack.last, last.indent >= indent { stack.removeLast() }
            stack.append((indent, String(key)))
            let path = stack.map(\.key)
            let isResponseExample =
                path.count >= 2 && path[path.count - 2] == "examples"
                && (path.contains("responses") || path.starts(with: ["components", "examples"]))
            index += 1
            guard isResponseExample, line.hasSuffix(":") else { continue }
            // Members: the lines indented under the example's name; a member's value runs on while
            // the following lines are indented deeper than the member's key.
            var members: [String: String] = [:]
            var member: String?
            while index < lines.count, Self.indent(lines[index]) > indent || lines[index].isEmpty {
                let memberLine = lines[index]
                if Self.indent(memberLine) == indent + 2, let memberKey = Self.key(memberLine) {
                    member = String(memberKey)
                    members[String(memberKey)] = String(memberLine.drop { $0 == " " }.dropFirst(memberKey.count + 1))
                        .trimmingCharacters(in: .whitespaces)
                } else if let member {
                    members[member, default: ""] += " " + memberLine.trimmingCharacters(in: .whitespaces)
                }
                index += 1
            }
            examples.append(Example(path: path, members: members))
        }
        return examples
    }

    /// The items of the block list under `components/schemas/ErrorCode/enum`.
    func errorCodes() -> [String] {
        guard let start = lines.firstIndex(where: { $0 == "    ErrorCode:" }),
            let list = lines[start...].firstIndex(where: { $0 == "      enum:" })
        else { return [] }
        return lines[(list + 1)...].prefix { $0.hasPrefix("        - ") }.map { String($0.dropFirst(10)) }
    }

    /// The `description` of `components/schemas/ErrorCode`, joined into one line.
    func errorCodeDescription() -> String {
        guard let start = lines.firstIndex(where: { $0 == "    ErrorCode:" }) else { return "" }
        return lines[(start + 2)...].prefix { $0.hasPrefix("        ") }.map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: " ")
    }

    /// The query parameters of each operation (`"GET /rows"`: `["limit", "offset"]`), from its
    /// `$ref`s into `components/parameters` with `in: query`.
    func queryParameters() -> [String: Set<String>] {
        var byComponent: [String: String] = [:]  // component name: parameter name, for `in: query`
        if let start = lines.firstIndex(of: "  parameters:") {
            var component: String?
            var name: String?
            for line in lines[(start + 1)...].prefix(while: { $0.isEmpty || $0.hasPrefix("   ") }) {
                if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                    component = String(line.dropFirst(4).dropLast())
                }
                if line.hasPrefix("      name: ") { name = String(line.dropFirst(12)) }
                if line == "      in: query", let component, let name { byComponent[component] = name }
            }
        }
        var operations: [String: Set<String>] = [:]
        var path = ""
        var operation: String?
        for line in lines.prefix(while: { $0 != "components:" }) {
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
                operation = nil
            }
            if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":"), !path.isEmpty {
                operation = "\(line.dropFirst(4).dropLast().uppercased()) \(path)"
                operations[operation!] = []
            }
            if let operation, let range = line.range(of: "#/components/parameters/") {
                let component = String(line[range.upperBound...].prefix { $0 != "'" })
                if let name = byComponent[component] { operations[operation]!.insert(name) }
            }
        }
        return operations
    }

    /// `info.version`.
    func infoVersion() -> String? {
        lines.first { $0.hasPrefix("  version: ") }.map { String($0.dropFirst(11)) }
    }
}

struct OpenAPIDocumentError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
