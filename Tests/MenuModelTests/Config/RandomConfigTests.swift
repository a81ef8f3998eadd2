import Foundation
import Testing

@testable import MenuModel

/// Menus from random configs, malformed ones among them: every config with a defect is refused,
/// every other one loads as written, and for every menu that loads a full walk of the rows agrees
/// with `count` and `leafCount` (and with the naive reference) under random toggles. Seeded: a
/// failure prints the config's seed and text; `RandomConfig(seed:)` rebuilds it.
@Suite struct RandomConfigTests {
    static let configsPerSeed = 60
    static let togglesPerMenu = 25

    @Test(arguments: 0 ..< 8 as Range<UInt64>)
    func randomConfigsAreRefusedOrWalkAsTheyCount(seed: UInt64) throws {
        for index in 0 ..< UInt64(Self.configsPerSeed) {
            let config = RandomConfig(seed: seed &* 1_000 &+ index)
            let context = "config seed \(config.seed), defect \(config.defect ?? "none"):\n\(config.json)"
            let menu: Menu
            do {
                menu = try Menu(jsonData: Data(config.json.utf8))
            } catch {
                #expect(config.defect != nil, "a valid config was refused (\(error)); \(context)")
                #expect(!error.problems.isEmpty && error.problems.allSatisfy { !$0.path.isEmpty }, "\(context)")
                continue
            }
            #expect(config.defect == nil, "a config with a defect loaded; \(context)")
            try checkWalks(menu, against: config.defect == nil ? config.spec : nil, seed: config.seed, context: context)
        }
    }

    /// Random toggles; after each one a plain walk of the menu's child lists must agree with the
    /// counts, and the view's rows (read whole and page by page) with the walk and `spec`'s naive view.
    func checkWalks(_ menu: Menu, against spec: [TreeSpec]?, seed: UInt64, context: String) throws {
        var rng = SplitMix64(state: seed ^ 0x5EED)
        var view = FlattenedView(menu: menu)
        var naive = spec.map(NaiveMenu.init(spec:))
        let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
        for step in 0 ... Self.togglesPerMenu {
            let walked = Self.visibleNodes(menu, view).map(menu.id(of:))
            let leaves = walked.count { !menu.isGroup(menu.node(withID: $0)!) }
            let countsAgree = walked.count == view.count && leaves == view.leafCount
            #expect(
                countsAgree,
                "step \(step): walked \(walked.count) rows (\(leaves) leaves), count \(view.count) (\(view.leafCount)); \(context)"
            )
            // Reading pages of a view whose counts are wrong may trap: stop here, seed printed.
            guard countsAgree else { return }
            let rows = view.rows(offset: 0, limit: max(1, view.count + 1))
            #expect(rows.map(\.id) == walked, "step \(step): rows; \(context)")
            #expect(rows.map(\.index) == Array(0 ..< rows.count), "step \(step): indexes; \(context)")
            if let reference = naive {
                #expect(
                    walked == reference.rows(offset: 0, limit: reference.count + 1).map(\.item.id),
                    "step \(step); \(context)")
            }
            if view.count > 0 {  // a page read from any row, as GET /rows does
                let offset = Int.random(in: 0 ..< view.count, using: &rng)
                #expect(
                    view.rows(offset: offset, limit: 7).map(\.id)
                        == Array(walked[offset ..< min(offset + 7, walked.count)]), "\(context)")
            }
            guard step < Self.togglesPerMenu, let id = groups.randomElement(using: &rng) else { break }
            let target = !view.isExpanded(menu.node(withID: id)!)
            _ = try view.toggle(id)
            _ = naive?.setExpanded(id, target)
        }
    }

    /// The visible nodes by a preorder walk of the menu's child lists and the view's expansion
    /// alone: none of the sizes or tables ``FlattenedView`` derives.
    static func visibleNodes(_ menu: Menu, _ view: FlattenedView) -> [Menu.Node] {
        var nodes: [Menu.Node] = []
        func visit(_ children: [Menu.Node]) {
            for child in children {
                nodes.append(child)
                if view.isExpanded(child) { visit(menu.children(of: child)) }
            }
        }
        visit(menu.children(of: 0))  // the implicit root's list: the top-level nodes
        return nodes
    }
}

/// One random config as text, with at most one defect the loader must refuse.
struct RandomConfig {
    let seed: UInt64
    private(set) var json = ""
    /// The tree the text describes (meaningful when `defect` is nil).
    private(set) var spec: [TreeSpec] = []
    /// What was broken, nil for a valid config.
    private(set) var defect: String?

    private var rng: SplitMix64
    private var counter = 0
    private var defectAt = -1  // the preorder number of the node to break (-1: the document)

    static let defects = [
        "second items", "second id", "second title", "second expanded", "second attributes",
        "repeated attribute key", "id not a string", "title not a string", "items not an array",
        "expanded not a bool", "attributes not an object", "node not an object", "no id", "no title",
        "taken id", "invalid id", "blank title", "expanded on a row", "unknown key",
        "document: second items", "document: second title", "cut short", "too deep"
    ]

    init(seed: UInt64) {
        self.seed = seed
        rng = SplitMix64(state: seed)
        let nodes = Int.random(in: 0 ... 30, using: &rng)
        if Int.random(in: 0 ..< 3, using: &rng) > 0 {
            defect = Self.defects.randomElement(using: &rng)!
            defectAt = Int.random(in: 0 ... max(0, nodes - 1), using: &rng)
        }
        var budget = nodes
        var items: [String] = []
        var top: [TreeSpec] = []
        while budget > 0 { items += list(depth: 0, budget: &budget, into: &top) }
        spec = top
        if nodes == 0, defect?.hasPrefix("document") == false { defect = nil }
        var members = [("items", "[" + items.joined(separator: ",") + "]")]
        if Bool.random(using: &rng) { members.append(("title", "\"Menu\"")) }
        switch defect {
        case "document: second items": members.append(("items", "[]"))
        case "document: second title": Self.giveTwice("title", "\"Again\"", in: &members)
        default: break
        }
        json = "{" + members.shuffled(using: &rng).map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
        if defect == "cut short" { json = String(json.dropLast(Int.random(in: 1 ... min(8, json.count), using: &rng))) }
        if defect == "too deep" {
            var chain = #"{"id": "deep-leaf", "title": "L"}"#
            for level in 0 ..< MenuBuilder.depthLimit {
                chain = #"{"id": "deep\#(level)", "title": "D", "items": [\#(chain)]}"#
            }
            json = #"{"items": [\#(chain)"# + (items.isEmpty ? "" : ", ") + items.joined(separator: ",") + "]}"
        }
    }

    /// Up to 5 sibling nodes' texts; their specs go to `specs`.
    private mutating func list(depth: Int, budget: inout Int, into specs: inout [TreeSpec]) -> [String] {
        var texts: [String] = []
        for _ in 0 ..< Int.random(in: 1 ... 5, using: &rng) where budget > 0 {
            budget -= 1
            texts.append(node(depth: depth, budget: &budget, into: &specs))
        }
        return texts
    }

    private mutating func node(depth: Int, budget: inout Int, into specs: inout [TreeSpec]) -> String {
        counter += 1
        let number = counter
        let broken = defectAt == number - 1 ? defect : nil
        let id = "n\(number)"
        var members: [(String, String)] = [("id", "\"\(id)\""), ("title", "\"Node \(number)\"")]
        var spec = TreeSpec.row(id, "Node \(number)")
        if depth < 6 && Int.random(in: 0 ..< 3, using: &rng) == 0 {
            var children: [TreeSpec] = []
            let texts = Bool.random(using: &rng) ? list(depth: depth + 1, budget: &budget, into: &children) : []
            let expanded = Bool.random(using: &rng)
            members.append(("items", "[" + texts.joined(separator: ",") + "]"))
            if expanded || Bool.random(using: &rng) { members.append(("expanded", String(expanded))) }
            spec = .group(id, "Node \(number)", expanded: expanded, children)
        }
        if Bool.random(using: &rng) { members.append(("attributes", attributes(depth: 0))) }
        let isGroup = spec.children != nil
        switch broken {
        case "second items": Self.giveTwice("items", #"[{"id": "x\#(number)", "title": "X"}]"#, in: &members)
        case "second id": Self.giveTwice("id", "\"y\(number)\"", in: &members)
        case "second title": Self.giveTwice("title", "\"Again\"", in: &members)
        case "second expanded": Self.giveTwice("expanded", "true", in: &members)
        case "second attributes": Self.giveTwice("attributes", "{}", in: &members)
        case "repeated attribute key":
            members.removeAll { $0.0 == "attributes" }
            members.append(("attributes", #"{"a": {"b": [1, {"c": 2, "c": 3}]}}"#))
        case "id not a string": members[0].1 = "\(number)"
        case "title not a string": members[1].1 = "null"
        case "items not an array":
            members.removeAll { $0.0 == "items" }
            members.append(("items", "{}"))
        case "expanded not a bool":
            members.removeAll { $0.0 == "expanded" }
            members.append(("expanded", "\"yes\""))
        case "attributes not an object":
            members.removeAll { $0.0 == "attributes" }
            members.append(("attributes", "[]"))
        case "node not an object": return "\"\(id)\""
        case "no id": members.removeAll { $0.0 == "id" }
        case "no title": members.removeAll { $0.0 == "title" }
        case "taken id": if number > 1 { members[0].1 = "\"n1\"" } else { members.append(("colour", "1")) }
        case "invalid id": members[0].1 = "\"n \(number)\""
        case "blank title": members[1].1 = "\" \\t\""
        case "expanded on a row":
            if !isGroup { members.append(("expanded", "false")) } else { members.append(("items", "[]")) }
        case "unknown key": members.append(("colour", "\"red\""))
        default: break
        }
        specs.append(spec)
        return "{" + members.shuffled(using: &rng).map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
    }

    /// Adds `key` with `value` until the object has it twice.
    private static func giveTwice(_ key: String, _ value: String, in members: inout [(String, String)]) {
        for _ in members.filter({ $0.0 == key }).count ..< 2 { members.append((key, value)) }
    }

    /// A random attributes object: numbers, strings, literals, nested arrays and objects.
    private mutating func attributes(depth: Int) -> String {
        let keys = ["price", "spicy", "tags", "n", "note"].shuffled(using: &rng).prefix(
            Int.random(in: 0 ... 3, using: &rng))
        return "{" + keys.map { "\"\($0)\": " + value(depth: depth + 1) }.joined(separator: ", ") + "}"
    }

    private mutating func value(depth: Int) -> String {
        switch Int.random(in: 0 ..< (depth < 3 ? 8 : 6), using: &rng) {
        case 0: "\(Int.random(in: -1_000 ... 1_000, using: &rng))"
        case 1: ["12.5", "1.10", "-0", "1e3", "18446744073709551615", "0.1"].randomElement(using: &rng)!
        case 2: "\"text\""
        case 3: "true"
        case 4: "null"
        case 5: "\"\\u00e9\\n\""
        case 6:
            "["
                + (0 ..< Int.random(in: 0 ... 3, using: &rng)).map { _ in value(depth: depth + 1) }.joined(
                    separator: ", ")
                + "]"
        default: attributes(depth: depth)
        }
    }
}
