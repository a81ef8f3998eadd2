import Foundation
import NaiveReference
import Testing

@testable import MenuModel

/// ``SearchFolding``, ``SearchIndex``, ``SearchQuery`` and ``FilteredView`` on small menus, one
/// behaviour per test (``SearchDifferentialTests`` compares them with a naive scan on random trees).
@Suite struct SearchIndexTests {
    /// drinks (closed) > [beer (closed) > [Lager, "Café au lait"], "Thé vert"], food > [Pâté, 麻婆豆腐].
    static let spec: [TreeSpec] = [
        .group(
            "drinks", "Drinks", expanded: false,
            [
                .group(
                    "beer", "Beer", expanded: false,
                    [
                        .row(
                            "lager", "Lager",
                            attributes: [
                                "abv": .number(JSONNumber(4.5)), "vegan": .bool(true), "origin": .string("Pilsen")
                            ]),
                        .row("latte", "Café au lait", attributes: ["vegan": .bool(false), "price": .integer(3)])
                    ]),
                .row("tea", "Thé vert", attributes: ["vegan": .bool(true), "origin": .string("Uji, Kyoto")])
            ]),
        .group(
            "food", "Food", expanded: true,
            [
                .row("pate", "Pâté", attributes: ["price": .integer(7)]),
                .row("mapo", "麻婆豆腐", attributes: ["price": .number(JSONNumber(text: "7.0")!)])
            ])
    ]

    /// The menu of `items` with a top-level `searchable` list.
    static func menu(_ items: [TreeSpec], searchable: [String]) throws -> Menu {
        var json = String(decoding: menuJSON(items), as: UTF8.self)
        json.removeFirst()
        let names = searchable.map { "\"\($0)\"" }.joined(separator: ",")
        return try Menu(jsonData: Data(("{\"searchable\":[\(names)]," + json).utf8))
    }

    func ids(_ query: SearchQuery, in menu: Menu) throws -> [String] {
        try SearchIndex(menu: menu).matches(for: query, in: menu).map { menu.id(of: Int($0)) }
    }

    @Test func foldingIgnoresCaseAccentsAndWidth() {
        #expect(SearchFolding.fold("Café") == Array("cafe".utf8))
        #expect(SearchFolding.fold("CAFE\u{301}") == Array("cafe".utf8))  // decomposed accent
        #expect(SearchFolding.fold("ＢＥＥＲ") == Array("beer".utf8))
        #expect(SearchFolding.fold("麻婆") == Array("麻婆".utf8))
    }

    @Test func theASCIIFastPathAgreesWithFoundation() {
        for byte in UInt8(0) ..< 0x80 {
            let text = String(decoding: [byte, UInt8(ascii: "x")], as: UTF8.self)
            #expect(SearchFolding.fold(text) == Array(SearchFolding.foundationFold(text).utf8), "byte \(byte)")
        }
    }

    @Test func cafeFindsCafeWithItsAccentAndAnyCase() throws {
        let menu = try makeMenu(Self.spec)
        #expect(try ids(SearchQuery(text: "cafe"), in: menu) == ["latte"])
        #expect(try ids(SearchQuery(text: "CAFÉ AU"), in: menu) == ["latte"])
        #expect(try ids(SearchQuery(text: "the"), in: menu) == ["tea"])
    }

    /// A query whose rarest byte is common in the menu (every title is `Dish N`) is looked for
    /// two bytes at a time (``SearchIndex/Anchors``), a query with a rare byte by `memchr`; both
    /// find exactly what a naive scan of the titles finds, at any start position in the blob
    /// (titles of every length, matches at a text's start and end, past 16-byte blocks).
    @Test func bothScansFindWhatANaiveScanFinds() throws {
        let rows = (1 ... 300).map { number in
            TreeSpec.row("r\(number)", "Dish \(number)\(number % 7 == 0 ? " ZQ" : "")")
        }
        let menu = try makeMenu([.group("g", "Group", rows)])
        let index = SearchIndex(menu: menu)
        for text in ["1", "12", "21", "7 ", "h 1", "dish 29", "sh 3", "00", "q", "zq", "dish", "g", "h 300", "999"] {
            let folded = SearchFolding.fold(text)
            let anchors = SearchIndex.Anchors(folded, byteCounts: index.byteCounts, blobCount: index.blob.count)
            let naive = menu.nodes.filter { SearchFolding.fold(menu.title(of: $0)).contains(folded) }.map(Int32.init)
            #expect(index.matches(folded: folded) == naive, "\(text) (pair: \(anchors.second != nil))")
        }
        let pair = SearchIndex.Anchors(
            SearchFolding.fold("12"), byteCounts: index.byteCounts, blobCount: index.blob.count)
        let single = SearchIndex.Anchors(
            SearchFolding.fold("zq"), byteCounts: index.byteCounts, blobCount: index.blob.count)
        #expect(pair.second != nil && single.second == nil, "both scans are exercised")
    }

    @Test func matchesComeInPreorderEachOnce() throws {
        let menu = try makeMenu(Self.spec)
        // "e" occurs in several texts and several times in one title.
        #expect(try ids(SearchQuery(text: "e"), in: menu) == ["beer", "lager", "latte", "tea", "pate"])
        #expect(try ids(SearchQuery(text: "豆腐"), in: menu) == ["mapo"])
        #expect(try ids(SearchQuery(text: "nothing like it"), in: menu).isEmpty)
    }

    @Test func searchableAttributesAreSearchedAndOthersAreNot() throws {
        let marked = try Self.menu(Self.spec, searchable: ["origin"])
        #expect(try ids(SearchQuery(text: "kyoto"), in: marked) == ["tea"])
        #expect(try ids(SearchQuery(text: "pilsen"), in: marked) == ["lager"])
        #expect(try ids(SearchQuery(text: "kyoto"), in: try makeMenu(Self.spec)).isEmpty)
        // No match spans two texts of a node: "vert" ends the title, "uji" starts the attribute.
        #expect(try ids(SearchQuery(text: "vertuji"), in: marked).isEmpty)
    }

    @Test func filtersCompareByEachValuesJSONType() throws {
        let menu = try makeMenu(Self.spec)
        let filter = { (text: String) in try AttributeFilter(parsing: text) }
        #expect(try ids(SearchQuery(text: nil, filters: [filter("vegan:true")]), in: menu) == ["lager", "tea"])
        #expect(try ids(SearchQuery(text: nil, filters: [filter("price:7")]), in: menu) == ["pate", "mapo"])
        #expect(try ids(SearchQuery(text: nil, filters: [filter("price:7e0")]), in: menu) == ["pate", "mapo"])
        #expect(try ids(SearchQuery(text: nil, filters: [filter("abv:4.50")]), in: menu) == ["lager"])
        #expect(try ids(SearchQuery(text: nil, filters: [filter("origin:Uji, Kyoto")]), in: menu) == ["tea"])
        #expect(try ids(SearchQuery(text: nil, filters: [filter("origin:uji, kyoto")]), in: menu).isEmpty)
        #expect(try ids(SearchQuery(text: "t", filters: [filter("vegan:true")]), in: menu) == ["tea"])
        #expect(
            try ids(SearchQuery(text: nil, filters: [filter("vegan:true"), filter("origin:Pilsen")]), in: menu) == [
                "lager"
            ])
        #expect(try ids(SearchQuery(text: nil, filters: [filter("vegan:yes")]), in: menu).isEmpty)
    }

    @Test func badQueriesAndFiltersAreRefusedSayingWhy() throws {
        let menu = try makeMenu(Self.spec)
        #expect(throws: SearchQueryError.emptyText) { try SearchQuery(text: "") }
        #expect(throws: SearchQueryError.textTooLong(characters: 201)) {
            try SearchQuery(text: String(repeating: "é", count: 201))
        }
        #expect(throws: SearchQueryError.nothingAsked) { try SearchQuery(text: nil) }
        #expect(throws: SearchQueryError.malformedFilter("vegan")) { try AttributeFilter(parsing: "vegan") }
        #expect(throws: SearchQueryError.malformedFilter(":true")) { try AttributeFilter(parsing: ":true") }
        #expect(throws: SearchQueryError.unknownAttribute("colour")) {
            try SearchIndex(menu: menu).matches(
                for: SearchQuery(text: nil, filters: [AttributeFilter(parsing: "colour:red")]), in: menu)
        }
        #expect(try AttributeFilter(parsing: "time:12:30") == AttributeFilter(name: "time", value: "12:30"))
        #expect(try SearchQuery(text: String(repeating: "é", count: 200)).text?.count == 200)
    }

    @Test func theFilteredViewShowsMatchesWithTheirAncestorsExpanded() throws {
        let menu = try makeMenu(Self.spec)
        let view = try SearchIndex(menu: menu).view(for: SearchQuery(text: "cafe"), in: menu)
        var shown: [(String, Bool, Int)] = []
        view.forEachRow(offset: 0, limit: 10) { row, descendants in
            shown.append((menu.id(of: row.node), row.isExpanded, descendants))
        }
        #expect(shown.map(\.0) == ["drinks", "beer", "latte"])
        #expect(shown.map(\.1) == [true, true, false])
        #expect(shown.map(\.2) == [2, 1, 0])
        #expect((view.count, view.leafCount) == (3, 1))
        #expect(view.index(ofNode: menu.node(withID: "latte")!) == 2)
        #expect(view.index(ofNode: menu.node(withID: "lager")!) == nil)
    }

    @Test func aMatchedGroupIsShownCollapsedUnlessSomethingInsideMatches() throws {
        let menu = try makeMenu(Self.spec)
        let index = SearchIndex(menu: menu)
        let beer = try index.view(for: SearchQuery(text: "beer"), in: menu)
        #expect(beer.count == 2 && beer.descendantCount(at: 1) == 0 && beer.descendantCount(at: 0) == 1)
        let both = try index.view(for: SearchQuery(text: "e"), in: menu)
        #expect(
            (0 ..< both.count).map { menu.id(of: both.node(at: $0)) } == [
                "drinks", "beer", "lager", "latte", "tea", "food", "pate"
            ])
        #expect((0 ..< both.count).map { both.descendantCount(at: $0) } == [4, 2, 0, 0, 0, 1, 0])
        #expect(both.leafCount == 4)
    }
}
