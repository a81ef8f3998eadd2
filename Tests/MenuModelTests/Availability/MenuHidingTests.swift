import Foundation
import NaiveReference
import Testing

@testable import MenuModel

/// ``Menu/hiding(_:)``: the listing while some nodes hide. It must be exactly the menu a config
/// without those subtrees loads, node for node (ids, titles in every locale, attributes, default
/// expansion, structure, rules, hours, `whenUnavailable`) and row for row in every expansion,
/// with a version of its own that depends only on the hidden ids.
@Suite struct MenuHidingTests {
    static func removing(_ ids: Set<String>, from items: [TreeSpec]) -> [TreeSpec] {
        items.compactMap { item in
            guard !ids.contains(item.id) else { return nil }
            var item = item
            item.children = item.children.map { removing(ids, from: $0) }
            return item
        }
    }

    /// `derived` and `expected` agree on every node and every row.
    static func expectSame(_ derived: Menu, _ expected: Menu, _ context: String) {
        #expect(derived.nodeCount == expected.nodeCount, "\(context)")
        guard derived.nodeCount == expected.nodeCount else { return }
        #expect(derived.height == expected.height && derived.locales == expected.locales, "\(context)")
        for node in expected.nodes {
            let same =
                derived.id(of: node) == expected.id(of: node) && derived.depth(of: node) == expected.depth(of: node)
                && derived.isGroup(node) == expected.isGroup(node)
                && derived.isExpandedByDefault(node) == expected.isExpandedByDefault(node)
                && derived.childCount(of: node) == expected.childCount(of: node)
                && derived.subtreeEnd(node) == expected.subtreeEnd(node)
                && derived.parent(of: node) == expected.parent(of: node)
                && derived.leafCount(of: node) == expected.leafCount(of: node)
                && derived.attributes(of: node) == expected.attributes(of: node)
                && derived.selectionRule(of: node) == expected.selectionRule(of: node)
                && derived.openingHours(of: node) == expected.openingHours(of: node)
                && derived.hidesWhenUnavailable(node) == expected.hidesWhenUnavailable(node)
                && derived.localeIndices.allSatisfy {
                    derived.title(of: node, locale: $0) == expected.title(of: node, locale: $0)
                }
            #expect(same, "node \(expected.id(of: node)); \(context)")
            if !same { return }
        }
        for mode in ExpansionMode.allCases {
            var a = FlattenedView(menu: derived)
            var b = FlattenedView(menu: expected)
            a.setAll(mode)
            b.setAll(mode)
            #expect(a.count == b.count && a.leafCount == b.leafCount, "\(mode); \(context)")
            #expect(
                a.rows(offset: 0, limit: a.count + 1) == b.rows(offset: 0, limit: b.count + 1), "\(mode); \(context)")
        }
    }

    @Test func randomHiddenNodesGiveTheMenuOfAConfigWithoutThem() throws {
        var rng = SplitMix64(state: 0x41D3)
        for round in 0 ..< 200 {
            let spec = withSelectionRules(
                randomTree(nodes: Int.random(in: 1 ... 120, using: &rng), maxDepth: 5, using: &rng), using: &rng)
            let menu = try makeMenu(spec)
            let hidden = menu.nodes.filter { _ in Int.random(in: 0 ..< 8, using: &rng) == 0 }
            let expected = try makeMenu(Self.removing(Set(hidden.map(menu.id(of:))), from: spec))
            let derived = menu.hiding(hidden.shuffled(using: &rng))
            Self.expectSame(derived, expected, "round \(round), hiding \(hidden.map(menu.id(of:)))")
            #expect(derived.version == (hidden.isEmpty ? menu.version : menu.hiding(hidden).version))
        }
    }

    @Test func theLocalizedMenuKeepsEveryLocaleHoursAndSettings() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/sichuan-menu-localized.json")
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: fixture)) as? [String: Any])
        // Hours on the breakfast group and a hide on the drinks, to be carried too.
        object["timeZone"] = "Europe/Paris"
        object["items"] = try #require(object["items"] as? [[String: Any]]).map { item in
            var item = item
            if item["id"] as? String == "breakfast" {
                item["hours"] = [["days": ["mon", "tue"], "from": "07:00", "to": "10:30"]]
            }
            if item["id"] as? String == "drinks" { item["whenUnavailable"] = "hide" }
            return item
        }
        let menu = try Menu(jsonData: try JSONSerialization.data(withJSONObject: object))
        let breakfast = try #require(menu.node(withID: "breakfast"))
        #expect(menu.locales.count > 1 && menu.openingHours(of: breakfast) != nil)
        let hidden = try ["beer", "mapo-tofu"].map { try #require(menu.node(withID: $0)) }
        func drop(_ items: [[String: Any]]) -> [[String: Any]] {
            items.compactMap { item in
                if ["beer", "mapo-tofu"].contains(item["id"] as? String) { return nil }
                var item = item
                if let children = item["items"] as? [[String: Any]] { item["items"] = drop(children) }
                return item
            }
        }
        object["items"] = drop(try #require(object["items"] as? [[String: Any]]))
        let expected = try Menu(jsonData: try JSONSerialization.data(withJSONObject: object))
        let derived = menu.hiding(hidden)
        #expect(derived.hidesAnyWhenUnavailable)
        Self.expectSame(derived, expected, "the localized menu without cold-dishes and mapo-tofu")
        #expect(derived.title(locale: 1) == menu.title(locale: 1) && derived.title == menu.title)
    }

    @Test func theVersionNamesTheHiddenSetWhateverItsOrder() throws {
        var rng = SplitMix64(state: 7)
        let menu = try makeMenu(randomTree(nodes: 40, maxDepth: 3, using: &rng))
        let (a, b) = (menu.nodes[3], menu.nodes[9])
        #expect(menu.hiding([]).version == menu.version)
        #expect(menu.hiding([a, b]).version == menu.hiding([b, a]).version)
        #expect(menu.hiding([a]).version != menu.hiding([b]).version)
        #expect(menu.hiding([a]).version.hasPrefix(menu.version + "~"))
    }
}
