import Foundation
import MenuModel

/// A menu described in code: turned into config JSON for ``Menu`` and into a ``NaiveMenu``.
public struct TreeSpec: Sendable {
    public var id: String
    public var title: String
    public var expanded: Bool = false
    /// nil for a row.
    public var children: [TreeSpec]?
    public var attributes: [String: JSONValue]?

    public init(id: String, title: String, expanded: Bool = false, children: [TreeSpec]? = nil, attributes: [String: JSONValue]? = nil) {
        self.id = id; self.title = title; self.expanded = expanded; self.children = children; self.attributes = attributes
    }

    public static func row(_ id: String, _ title: String? = nil, attributes: [String: JSONValue]? = nil) -> TreeSpec {
        TreeSpec(id: id, title: title ?? id, children: nil, attributes: attributes)
    }
    public static func group(_ id: String, _ title: String? = nil, expanded: Bool = false, _ children: [TreeSpec]) -> TreeSpec {
        TreeSpec(id: id, title: title ?? id, expanded: expanded, children: children)
    }

    var jsonObject: [String: Any] {
        var object: [String: Any] = ["id": id, "title": title]
        if let children {
            object["items"] = children.map(\.jsonObject)
            object["expanded"] = expanded
        }
        if let attributes { object["attributes"] = try! JSONSerialization.jsonObject(with: JSONEncoder().encode(attributes)) }
        return object
    }
}

/// The config JSON of `items` (keys sorted).
public func menuJSON(_ items: [TreeSpec], title: String? = nil) -> Data {
    var object: [String: Any] = ["items": items.map(\.jsonObject)]
    if let title { object["title"] = title }
    return try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
}

/// Loads `items` through the real config loader.
public func makeMenu(_ items: [TreeSpec]) throws -> Menu {
    try Menu(jsonData: menuJSON(items))
}

/// A random tree of about `nodes` nodes, at most `maxDepth + 1` levels, reproducible from the generator's seed.
public func randomTree(nodes: Int, maxDepth: Int, using rng: inout SplitMix64) -> [TreeSpec] {
    var counter = 0
    func make(depth: Int, budget: inout Int) -> [TreeSpec] {
        var items: [TreeSpec] = []
        let width = Int.random(in: 0 ... 6, using: &rng)
        for _ in 0 ..< width where budget > 0 {
            budget -= 1
            counter += 1
            let id = "n\(counter)"
            if depth < maxDepth && Bool.random(using: &rng) {
                let children = make(depth: depth + 1, budget: &budget)
                items.append(.group(id, "Group \(counter)", expanded: Bool.random(using: &rng), children))
            } else {
                items.append(.row(id, "Row \(counter)", attributes: counter % 5 == 0 ? ["n": .integer(Int64(counter))] : nil))
            }
        }
        return items
    }
    var budget = nodes
    var top: [TreeSpec] = []
    while budget > 0 { top += make(depth: 0, budget: &budget) }
    return top
}
