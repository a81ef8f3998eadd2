import Foundation
import MenuAppTestSupport
import MenuModel
import MenuTestSupport
import NaiveReference
import Testing

@testable import MenuService

/// The rows of a menu's other locales: the default locale's bytes with each title swapped for
/// the locale's, in both ways of writing a page, and the row bound still covering every row.
@Suite("EncodedMenu in each locale")
struct EncodedMenuLocaleTests {
    /// A random menu of `nodes` nodes in zh-Hant (the default), en and fr: titles of random
    /// lengths with quotes, backslashes and CJK in them, and about a third of the nodes without
    /// an English or French one.
    static func localizedMenu(seed: UInt64, nodes: Int = 300) throws -> Menu {
        var rng = SplitMix64(state: seed)
        func title(_ base: String) -> String {
            let extra = String(repeating: ["好", "\"", "\\", "a", "é"][Int(rng.next() % 5)], count: Int(rng.next() % 40))
            return base + extra
        }
        var made = 0
        func items(depth: Int) -> String {
            var list: [String] = []
            while made < nodes, list.count < 6 || (depth == 0 && made < nodes) {
                made += 1
                var titles = [#""zh-Hant": \#(title("菜\(made)").jsonQuoted)"#]
                if rng.next() % 3 != 0 { titles.append(#""en": \#(title("Dish \(made)").jsonQuoted)"#) }
                if rng.next() % 3 != 0 { titles.append(#""fr": \#(title("Plat \(made)").jsonQuoted)"#) }
                var node = #"{"id": "n\#(made)", "title": {\#(titles.joined(separator: ", "))}"#
                if depth < 4, rng.next() % 3 == 0 {
                    node += #", "expanded": \#(rng.next() % 2 == 0), "items": [\#(items(depth: depth + 1))]"#
                }
                list.append(node + "}")
                if depth > 0, rng.next() % 4 == 0 { break }
            }
            return list.joined(separator: ",")
        }
        let json = #"{"defaultLocale": "zh-Hant", "locales": ["zh-Hant", "en", "fr"], "items": [\#(items(depth: 0))]}"#
        return try Menu(jsonData: Data(json.utf8))
    }

    static func page(_ encoded: EncodedMenu, _ view: FlattenedView, offset: Int, limit: Int, roomy: Bool) throws
        -> [LiveRow]
    {
        var writer = JSONWriter(capacity: 64 * 1024)
        if !roomy {
            writer.raw([UInt8](repeating: UInt8(ascii: " "), count: writer.spareCapacity - encoded.rowBound + 1))
        }
        encoded.writeRows(
            of: view, offset: offset, limit: limit, marks: nil, selection: RowSelection(nothingSelectedIn: view.menu),
            to: &writer)
        return try JSONDecoder().decode([LiveRow].self, from: Data(writer.bytes.drop { $0 == UInt8(ascii: " ") }))
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func eachLocalesPagesAreTheModelsRowsWithThatLocalesTitles(seed: UInt64) throws {
        let menu = try Self.localizedMenu(seed: seed)
        let base = EncodedMenu(menu: menu)
        let encodings =
            [base] + menu.localeIndices.dropFirst().map { EncodedMenu(localizing: base, menu: menu, locale: $0) }
        var view = FlattenedView(menu: menu)
        var rng = SplitMix64(state: seed)
        let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
        for step in 0 ..< 30 {
            if let group = groups.randomElement(using: &rng) { _ = try view.toggle(group) }
            let offset = Int.random(in: 0 ... max(0, view.count - 1), using: &rng)
            let limit = Int.random(in: 1 ... 80, using: &rng)
            for (locale, encoded) in encodings.enumerated() {
                var expected = view.rows(offset: offset, limit: limit).map(LiveRow.init)
                for index in expected.indices {
                    expected[index].title = menu.title(of: menu.node(withID: expected[index].id)!, locale: locale)
                }
                for roomy in [true, false] {
                    #expect(
                        try Self.page(encoded, view, offset: offset, limit: limit, roomy: roomy) == expected,
                        "seed \(seed) step \(step) locale \(menu.locales[locale]) roomy \(roomy)")
                }
            }
        }
    }

    @Test func theRowBoundCoversEveryRowInEveryLocaleAndTheBytesAreShared() throws {
        let menu = try Self.localizedMenu(seed: 9)
        let base = EncodedMenu(menu: menu)
        var view = FlattenedView(menu: menu)
        for node in menu.nodes where menu.isGroup(node) && !view.isExpanded(node) {
            _ = try view.toggle(menu.id(of: node))
        }
        for locale in menu.localeIndices.dropFirst() {
            let encoded = EncodedMenu(localizing: base, menu: menu, locale: locale)
            for offset in 0 ..< view.count {
                var writer = JSONWriter(capacity: 16)
                encoded.writeRows(
                    of: view, offset: offset, limit: 1, marks: nil,
                    selection: RowSelection(nothingSelectedIn: view.menu), to: &writer)
                #expect(writer.count - 2 <= encoded.rowBound)
            }
            // Its own bytes are its titles and their offsets: the rows' other bytes are the default's.
            #expect(encoded.ownBytes < base.ownBytes / 2)
        }
    }
}
