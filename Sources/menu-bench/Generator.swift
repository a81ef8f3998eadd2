import MenuModel
import NaiveReference

/// A synthetic menu size: a complete 10-ary tree of `depth` levels, groups above rows.
enum MenuSize: String, CaseIterable {
    case small, medium, large

    var depth: Int {
        switch self {
        case .small: 3
        case .medium: 5
        case .large: 6
        }
    }

    /// 10 + 100 + … + 10^depth: 1,110 / 111,110 / 1,111,110.
    var nodeCount: Int { (1 ... depth).reduce(0) { total, level in total + SyntheticMenu.power(level) } }

    var label: String {
        switch self {
        case .small: "1.1k"
        case .medium: "111k"
        case .large: "1.1M"
        }
    }
}

/// The benchmark's menus, the same on every run: a complete tree with fan-out 10, ids and titles
/// numbered in preorder, ~70% of groups expanded by default (fixed-seed draw) and attributes on
/// every fourth row (a price, and on every twelfth row a flag too).
enum SyntheticMenu {
    static let fanOut = 10

    static func power(_ exponent: Int) -> Int { (0 ..< exponent).reduce(1) { product, _ in product * fanOut } }

    static func spec(_ size: MenuSize) -> [TreeSpec] {
        var rng = SplitMix64(state: 0x00C0_FFEE)
        var counter = 0
        func level(_ remaining: Int) -> [TreeSpec] {
            (0 ..< fanOut).map { _ in
                counter += 1
                let n = counter
                guard remaining > 1 else {
                    var attributes: [String: JSONValue]?
                    if n % 4 == 0 { attributes = ["price": .number(JSONNumber(Double(n % 40) + 0.5))] }
                    if n % 12 == 0 { attributes?["spicy"] = .bool(true) }
                    return .row("r\(n)", "Dish \(n)", attributes: attributes)
                }
                let expanded = rng.next() % 10 < 7
                return .group("g\(n)", "Group \(n)", expanded: expanded, level(remaining - 1))
            }
        }
        return level(size.depth)
    }

    /// Compact config JSON of `items`. Writes only what ``spec(_:)`` makes: printable ASCII ids and
    /// titles without quotes or backslashes (nothing to escape) and number or bool attributes.
    static func json(_ items: [TreeSpec], title: String) -> [UInt8] {
        var out: [UInt8] = []
        func text(_ value: String) { out.append(contentsOf: value.utf8) }
        func quoted(_ value: String) {
            precondition(
                value.utf8.allSatisfy {
                    (0x20 ..< 0x7F).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\")
                })
            text("\"")
            text(value)
            text("\"")
        }
        func node(_ spec: TreeSpec) {
            text("{\"id\":")
            quoted(spec.id)
            text(",\"title\":")
            quoted(spec.title)
            if let children = spec.children {
                text(spec.expanded ? ",\"expanded\":true" : ",\"expanded\":false")
                text(",\"items\":")
                list(children)
            }
            if let attributes = spec.attributes {
                text(",\"attributes\":{")
                for (index, key) in attributes.keys.sorted().enumerated() {
                    if index > 0 { text(",") }
                    quoted(key)
                    text(":")
                    switch attributes[key]! {
                    case .number(let number): text(number.text)
                    case .bool(let flag): text(flag ? "true" : "false")
                    default: preconditionFailure("the generator writes only number and bool attributes")
                    }
                }
                text("}")
            }
            text("}")
        }
        func list(_ specs: [TreeSpec]) {
            text("[")
            for (index, spec) in specs.enumerated() {
                if index > 0 { text(",") }
                node(spec)
            }
            text("]")
        }
        text("{\"title\":")
        quoted(title)
        text(",\"items\":")
        list(items)
        text("}\n")
        return out
    }
}
