import Foundation
@testable import MenuModel

/// The seeds' design, kept deliberately naive as a reference: a mutable tree with `isExpand` on
/// every node, recursive `count()` and `itemAt(index)`. Correct by inspection, O(n) per call.
final class NaiveMenuItem {
    let id: String
    let title: String
    let isGroup: Bool
    let depth: Int
    var isExpand: Bool
    var children: [NaiveMenuItem] = []
    let attributes: [String: JSONValue]?

    init(id: String, title: String, isGroup: Bool, depth: Int, isExpand: Bool, attributes: [String: JSONValue]?) {
        self.id = id; self.title = title; self.isGroup = isGroup; self.depth = depth
        self.isExpand = isExpand; self.attributes = attributes
    }

    /// Rows this item shows: itself plus, when expanded, its children's.
    func count() -> Int {
        var count = 1
        if isExpand { for child in children { count += child.count() } }
        return count
    }

    func leafCount() -> Int {
        if !isGroup { return 1 }
        return isExpand ? children.reduce(0) { $0 + $1.leafCount() } : 0
    }

    /// The item at `index` of this item's rows (0 is the item itself).
    func itemAt(_ index: Int) -> NaiveMenuItem? {
        if index == 0 { return self }
        guard isExpand else { return nil }
        var rest = index - 1
        for child in children {
            let size = child.count()
            if rest < size { return child.itemAt(rest) }
            rest -= size
        }
        return nil
    }

    func find(_ id: String) -> (item: NaiveMenuItem, ancestors: [NaiveMenuItem])? {
        for child in children {
            if child.id == id { return (child, [self]) }
            if let found = child.find(id) { return (found.item, [self] + found.ancestors) }
        }
        return nil
    }
}

/// The reference view: a root item (never a row) over the top-level items.
struct NaiveMenu {
    let root: NaiveMenuItem

    init(spec: [TreeSpec]) {
        root = NaiveMenuItem(id: "", title: "", isGroup: true, depth: -1, isExpand: true, attributes: nil)
        func build(_ specs: [TreeSpec], into parent: NaiveMenuItem) {
            for spec in specs {
                let item = NaiveMenuItem(id: spec.id, title: spec.title, isGroup: spec.children != nil,
                                         depth: parent.depth + 1, isExpand: spec.expanded, attributes: spec.attributes)
                parent.children.append(item)
                if let children = spec.children { build(children, into: item) }
            }
        }
        build(spec, into: root)
    }

    var count: Int { root.count() - 1 }
    var leafCount: Int { root.leafCount() }

    func rows(offset: Int, limit: Int) -> [(index: Int, item: NaiveMenuItem)] {
        guard offset >= 0, limit > 0 else { return [] }
        let total = count
        return (offset ..< min(offset + limit, total)).map { ($0, root.itemAt($0 + 1)!) }
    }

    func index(of id: String) -> Int? {
        guard let found = root.find(id) else { return nil }
        guard found.ancestors.dropFirst().allSatisfy(\.isExpand) else { return nil }
        for i in 0 ..< count where root.itemAt(i + 1) === found.item { return i }
        return nil
    }

    /// Sets a group's state the seed's way (flip `isExpand`), returning what a table view needs.
    mutating func setExpanded(_ id: String, _ expanded: Bool) -> ExpansionChange? {
        guard let found = root.find(id), found.item.isGroup else { return nil }
        let index = index(of: id)
        let before = count
        found.item.isExpand = expanded
        let after = count
        return ExpansionChange(id: id, isExpanded: expanded, index: index,
                               change: index.map { RowChange(at: $0 + 1, inserted: max(after - before, 0), removed: max(before - after, 0)) })
    }
}

/// A menu described in tests: turned into config JSON for ``Menu`` and into a ``NaiveMenu``.
struct TreeSpec {
    var id: String
    var title: String
    var expanded: Bool = false
    var children: [TreeSpec]?
    var attributes: [String: JSONValue]?

    static func row(_ id: String, _ title: String? = nil, attributes: [String: JSONValue]? = nil) -> TreeSpec {
        TreeSpec(id: id, title: title ?? id, children: nil, attributes: attributes)
    }
    static func group(_ id: String, _ title: String? = nil, expanded: Bool = false, _ children: [TreeSpec]) -> TreeSpec {
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

func menuJSON(_ items: [TreeSpec], title: String? = nil) -> Data {
    var object: [String: Any] = ["items": items.map(\.jsonObject)]
    if let title { object["title"] = title }
    return try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
}

func makeMenu(_ items: [TreeSpec]) throws -> Menu {
    try Menu(jsonData: menuJSON(items))
}

/// Random trees for differential tests, reproducible from a seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func randomTree(nodes: Int, maxDepth: Int, using rng: inout SplitMix64) -> [TreeSpec] {
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
