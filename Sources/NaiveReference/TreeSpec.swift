import Foundation
import MenuModel

/// A menu described in code: turned into config JSON for ``Menu`` and into a ``NaiveMenu``.
package struct TreeSpec: Sendable {
    package var id: String
    package var title: String
    package var expanded: Bool = false
    /// nil for a row.
    package var children: [TreeSpec]?
    package var attributes: [String: JSONValue]?
    /// A group's `maxSelect`: the most leaves under it a session may choose.
    package var maxSelect: Int?

    package init(
        id: String, title: String, expanded: Bool = false, children: [TreeSpec]? = nil,
        attributes: [String: JSONValue]? = nil
    ) {
        self.id = id
        self.title = title
        self.expanded = expanded
        self.children = children
        self.attributes = attributes
    }

    package static func row(_ id: String, _ title: String? = nil, attributes: [String: JSONValue]? = nil) -> TreeSpec {
        TreeSpec(id: id, title: title ?? id, children: nil, attributes: attributes)
    }
    package static func group(_ id: String, _ title: String? = nil, expanded: Bool = false, _ children: [TreeSpec])
        -> TreeSpec
    {
        TreeSpec(id: id, title: title ?? id, expanded: expanded, children: children)
    }

    /// Appends this node as config JSON (keys sorted) to `out`.
    func appendJSON(to out: inout String) {
        out += "{"
        if let attributes {
            out += "\"attributes\":"
            appendJSONValue(.object(attributes), to: &out)
            out += ","
        }
        if children != nil { out += "\"expanded\":\(expanded)," }
        out += "\"id\":"
        appendJSONString(id, to: &out)
        if let children {
            out += ",\"items\":["
            for (index, child) in children.enumerated() {
                if index > 0 { out += "," }
                child.appendJSON(to: &out)
            }
            out += "]"
        }
        if let maxSelect { out += ",\"maxSelect\":\(maxSelect)" }
        out += ",\"title\":"
        appendJSONString(title, to: &out)
        out += "}"
    }
}

/// `text` as a JSON string (``Swift/String/jsonQuoted``, MenuModel's escaping).
private func appendJSONString(_ text: String, to out: inout String) {
    out += text.jsonQuoted
}

/// `value` as JSON text, object keys sorted.
private func appendJSONValue(_ value: JSONValue, to out: inout String) {
    switch value {
    case .null: out += "null"
    case .bool(let value): out += "\(value)"
    case .integer(let value): out += "\(value)"
    case .number(let value): out += "\(value)"
    case .string(let value): appendJSONString(value, to: &out)
    case .array(let values):
        out += "["
        for (index, element) in values.enumerated() {
            if index > 0 { out += "," }
            appendJSONValue(element, to: &out)
        }
        out += "]"
    case .object(let members):
        out += "{"
        for (index, key) in members.keys.sorted().enumerated() {
            if index > 0 { out += "," }
            appendJSONString(key, to: &out)
            out += ":"
            appendJSONValue(members[key]!, to: &out)
        }
        out += "}"
    }
}

/// The config JSON of `items` (keys sorted), written directly as text (a menu of 100,000 nodes
/// in a fraction of the time `JSONSerialization` takes for the same tree).
package func menuJSON(_ items: [TreeSpec], title: String? = nil) -> Data {
    var out = "{\"items\":["
    for (index, item) in items.enumerated() {
        if index > 0 { out += "," }
        item.appendJSON(to: &out)
    }
    out += "]"
    if let title {
        out += ",\"title\":"
        appendJSONString(title, to: &out)
    }
    out += "}"
    return Data(out.utf8)
}

/// Loads `items` through the real config loader.
package func makeMenu(_ items: [TreeSpec]) throws -> Menu {
    try Menu(jsonData: menuJSON(items))
}

/// A random tree of about `nodes` nodes, at most `maxDepth + 1` levels, each list of children
/// `width` long (fewer when the budget runs out), ids `idPrefix` + "n1", "n2"…, reproducible from
/// the generator's seed.
/// `spec` with a `maxSelect` of 1 to 4 on about one group in four, chosen by `rng`.
package func withSelectionRules(_ spec: [TreeSpec], using rng: inout SplitMix64) -> [TreeSpec] {
    spec.map { node in
        var node = node
        guard let children = node.children else { return node }
        node.children = withSelectionRules(children, using: &rng)
        if Int.random(in: 0 ..< 4, using: &rng) == 0 { node.maxSelect = Int.random(in: 1 ... 4, using: &rng) }
        return node
    }
}

package func randomTree(
    nodes: Int, maxDepth: Int, width widths: ClosedRange<Int> = 0 ... 6, idPrefix: String = "",
    using rng: inout SplitMix64
) -> [TreeSpec] {
    var counter = 0
    func make(depth: Int, budget: inout Int) -> [TreeSpec] {
        var items: [TreeSpec] = []
        let width = Int.random(in: widths, using: &rng)
        for _ in 0 ..< width where budget > 0 {
            budget -= 1
            counter += 1
            let id = "\(idPrefix)n\(counter)"
            if depth < maxDepth && Bool.random(using: &rng) {
                let children = make(depth: depth + 1, budget: &budget)
                items.append(.group(id, "Group \(counter)", expanded: Bool.random(using: &rng), children))
            } else {
                items.append(
                    .row(id, "Row \(counter)", attributes: counter % 5 == 0 ? ["n": .integer(Int64(counter))] : nil))
            }
        }
        return items
    }
    var budget = nodes
    var top: [TreeSpec] = []
    while budget > 0 { top += make(depth: 0, budget: &budget) }
    return top
}
