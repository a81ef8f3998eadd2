import Foundation
import NaiveReference
import Testing

@testable import MenuModel

/// Search against a naive oracle: on random trees whose titles and attributes mix accents, case,
/// width forms, ligatures and CJK, every random query's matches must be exactly the nodes one of
/// whose texts contains the query when both are folded by Foundation (the reference folding, so
/// the index's ASCII fast path is checked too), filters must hold exactly where a naive comparison
/// says, and the filtered view must be the sorted set of matches and their ancestors with each
/// entry's count of shown descendants.
///
/// Seeds are random on each run and printed with every failure; set `MENU_DIFFERENTIAL_SEED` to
/// replay one.
@Suite struct SearchDifferentialTests {
    static let baseSeed: UInt64 =
        ProcessInfo.processInfo.environment["MENU_DIFFERENTIAL_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 0 ... UInt64.max)

    static let words = [
        "Café", "cafe", "CAFÉ", "Thé", "the", "beer", "Bière", "麻婆豆腐", "豆腐", "麵", "面", "Straße",
        "strasse", "ＢＥＥＲ", "naïve", "Ωmega", "ωμέγα", "ﬁne", "fine", "Ça", "ça", "e\u{301}t\u{E9}", "Noël",
        "KÄSE", "käse", "tofu", "Tofu", "ramen", "ラーメン", "한국", "x"
    ]
    static let attributeNames = ["origin", "vegan", "price", "note"]

    /// A title of one to three words, sometimes with a space or a digit between them.
    static func title(using rng: inout SplitMix64) -> String {
        (0 ..< Int.random(in: 1 ... 3, using: &rng)).map { _ in words.randomElement(using: &rng)! }
            .joined(separator: [" ", "", "-", "1"].randomElement(using: &rng)!)
    }

    static func attributes(using rng: inout SplitMix64) -> [String: JSONValue]? {
        guard Int.random(in: 0 ..< 3, using: &rng) > 0 else { return nil }
        var attributes: [String: JSONValue] = [:]
        for name in attributeNames where Bool.random(using: &rng) {
            switch name {
            case "vegan": attributes[name] = .bool(Bool.random(using: &rng))
            case "price":
                attributes[name] =
                    Bool.random(using: &rng)
                    ? .integer(Int64.random(in: 0 ... 4, using: &rng))
                    : .number(JSONNumber(Double(Int.random(in: 0 ... 8, using: &rng)) / 2))
            default: attributes[name] = .string(title(using: &rng))
            }
        }
        return attributes
    }

    /// `tree` with random titles and attributes on every node.
    static func decorate(_ tree: [TreeSpec], using rng: inout SplitMix64) -> [TreeSpec] {
        tree.map { node in
            var node = node
            node.title = title(using: &rng)
            if node.children == nil { node.attributes = attributes(using: &rng) }
            node.children = node.children.map { decorate($0, using: &rng) }
            return node
        }
    }

    /// A query text: a piece of a title (its case sometimes flipped), a word, or text no title has.
    static func queryText(titles: [String], using rng: inout SplitMix64) -> String {
        switch Int.random(in: 0 ..< 4, using: &rng) {
        case 0:
            let title = Array(titles.randomElement(using: &rng)!)
            let start = Int.random(in: 0 ..< title.count, using: &rng)
            let piece = String(title[start ..< Int.random(in: start + 1 ... title.count, using: &rng)])
            return Bool.random(using: &rng) ? piece.uppercased() : piece
        case 1: return words.randomElement(using: &rng)!
        case 2: return words.randomElement(using: &rng)!.lowercased()
        default: return "zq" + String(Int.random(in: 0 ... 99, using: &rng))
        }
    }

    /// A filter on one of `names` (attributes some node has: a filter naming one no node has is
    /// refused, which the search's own tests cover).
    static func filter(among names: [String], using rng: inout SplitMix64) -> AttributeFilter {
        let name = names.randomElement(using: &rng)!
        let value: String
        switch name {
        case "vegan": value = Bool.random(using: &rng) ? "true" : ["false", "yes", "1"].randomElement(using: &rng)!
        case "price": value = ["0", "1", "2.0", "1.5", "3e0", "4", "x", "-0"].randomElement(using: &rng)!
        default: value = words.randomElement(using: &rng)!
        }
        return AttributeFilter(name: name, value: value)
    }

    /// The naive reference: Foundation's folding of each text, a byte search, a plain comparison.
    static func naiveMatches(_ query: SearchQuery, in menu: Menu) -> [Int32] {
        let needle = query.text.map { Array(SearchFolding.foundationFold($0).utf8) }
        return menu.nodes.filter { node in
            if let needle {
                let found = SearchIndex.searchTexts(of: node, in: menu).contains { text in
                    let folded = Array(SearchFolding.foundationFold(text).utf8)
                    return folded.count >= needle.count
                        && (0 ... folded.count - needle.count).contains {
                            folded[$0 ..< $0 + needle.count].elementsEqual(needle)
                        }
                }
                guard found else { return false }
            }
            return query.filters.allSatisfy { filter in
                switch menu.attributes(of: node)?[filter.name] {
                case .string(let text): text == filter.value
                case .bool(let flag): filter.value == String(flag)
                case .integer(let integer): Double(filter.value) == Double(integer)
                case .number(let number): Double(filter.value) == number.doubleValue
                default: false
                }
            }
        }.map { Int32($0) }
    }

    @Test(arguments: 0 ..< 8)
    func searchAgreesWithANaiveScan(run: Int) throws {
        let seed = Self.baseSeed &+ UInt64(run)
        var rng = SplitMix64(state: seed)
        let tree = Self.decorate(
            randomTree(nodes: Int.random(in: 20 ... 400, using: &rng), maxDepth: 5, using: &rng), using: &rng)
        let searchable = Array(["origin", "note"].prefix(Int.random(in: 0 ... 2, using: &rng)))
        let menu = try SearchIndexTests.menu(tree, searchable: searchable)
        let index = SearchIndex(menu: menu)
        let titles = menu.nodes.map(menu.title(of:))
        let attributeNames = Self.attributeNames.filter { name in
            menu.nodes.contains { menu.attributes(of: $0)?[name] != nil }
        }
        var answered = 0  // queries with at least one match: the comparison is not of empty lists only
        // At least 60 queries, and more (up to 600) until 10 have matched: a small tree with
        // filters can leave most of 60 random queries without a match.
        for step in 0 ..< 600 where step < 60 || answered < 10 {
            let text: String? =
                step % 5 == 4 && !attributeNames.isEmpty ? nil : Self.queryText(titles: titles, using: &rng)
            let filterCount = attributeNames.isEmpty ? 0 : text == nil ? 1 : Int.random(in: 0 ... 2, using: &rng)
            let filters = (0 ..< filterCount).map { _ in Self.filter(among: attributeNames, using: &rng) }
            let query = try SearchQuery(text: text, filters: filters)
            let matches = try index.matches(for: query, in: menu)
            let expected = Self.naiveMatches(query, in: menu)
            #expect(
                matches == expected, "seed \(seed) step \(step) query \(String(reflecting: text)) filters \(filters)")
            if !expected.isEmpty { answered += 1 }
            try checkView(FilteredView(menu: menu, matches: expected), matches: expected, seed: seed, step: step)
        }
        #expect(answered >= 10, "seed \(seed): only \(answered) of 600 queries matched anything")
    }

    func checkView(_ view: FilteredView, matches: [Int32], seed: UInt64, step: Int) throws {
        let menu = view.menu
        var shown = Set(matches.map(Int.init))
        for match in matches {
            var parent = menu.parent(of: Int(match))
            while let group = parent {
                shown.insert(group)
                parent = menu.parent(of: group)
            }
        }
        let nodes = shown.sorted()
        #expect((0 ..< view.count).map(view.node(at:)) == nodes, "seed \(seed) step \(step)")
        let descendants = nodes.map { node in nodes.count { $0 > node && $0 < menu.subtreeEnd(node) } }
        #expect((0 ..< view.count).map(view.descendantCount(at:)) == descendants, "seed \(seed) step \(step)")
        #expect(view.leafCount == nodes.count { !menu.isGroup($0) })
        // A row's place among the shown children of its parent, and their number, by a scan.
        let siblings = nodes.map { node in nodes.filter { menu.parent(of: $0) == menu.parent(of: node) } }
        #expect(
            (0 ..< view.count).map(view.positionInSet(at:)) == zip(nodes, siblings).map { $1.firstIndex(of: $0)! + 1 },
            "seed \(seed) step \(step)")
        #expect((0 ..< view.count).map(view.setSize(at:)) == siblings.map(\.count), "seed \(seed) step \(step)")
        var rows: [Int] = []
        view.forEachRow(offset: 1, limit: 7) { row, count in
            rows.append(row.node)
            #expect(row.isExpanded == (count > 0) && row.index == rows.count)
        }
        #expect(rows == Array(nodes.dropFirst().prefix(7)))
        for node in menu.nodes where node % 7 == step % 7 {
            #expect(view.index(ofNode: node) == nodes.firstIndex(of: node), "seed \(seed) step \(step) node \(node)")
        }
    }
}
