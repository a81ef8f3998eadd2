// Rows drawn as the seed's app shows them: groups flush left with ▾/▸, rows indented under them,
// prices from attributes, and every line exactly the screen's width so the columns align with CJK titles.

import MenuClient
import MenuTerminal
import Testing

extension TerminalTests {
    @Suite("Row lines")
    struct RowFormatterTests {
        static let group = MenuRow(
            index: 0, id: "main-courses", title: "主菜", depth: 0, parentId: nil, isGroup: true,
            isExpanded: true, childCount: 9, attributes: ["en": .string("Main Courses")],
            visibleDescendantCount: 9)
        static func dish(
            _ title: String, _ english: String, price: Double, spicy: Double = 0, vegetarian: Bool = false,
            depth: Int = 1, volume: Double? = nil
        ) -> MenuRow {
            var attributes: [String: MenuJSONValue] = [
                "en": .string(english), "price": .number(price), "currency": .string("CNY"),
                "spicy": .number(spicy), "vegetarian": .bool(vegetarian)
            ]
            if let volume { attributes["volumeMl"] = .number(volume) }
            return MenuRow(
                index: 1, id: english.lowercased(), title: title, depth: depth, parentId: "main-courses",
                isGroup: false,
                attributes: attributes)
        }

        static let dishes = [
            dish("宮保雞丁", "Kung Pao Chicken", price: 38, spicy: 2),
            dish("鍋巴肉片", "Sizzling Rice Crust with Pork Slices", price: 39.5),
            dish("麻辣小面", "Chongqing Spicy Noodles", price: 9.5, spicy: 3, vegetarian: true),
            dish("瀘州老窖特曲", "Luzhou Laojiao Tequ", price: 298, depth: 2, volume: 500),
            dish("Plain", "Plain", price: 1280)
        ]

        @Test func groupsAreFlushLeftWithTheirDisclosureAndRowsIndentedUnderThem() {
            let formatter = RowFormatter(width: 80, rowCount: 30)
            #expect(
                formatter.line(for: Self.group, at: 0, isCursor: false).description.hasPrefix(
                    " 1 ▾ 主菜 (9)  Main Courses"))
            var closed = Self.group
            closed.isExpanded = false
            #expect(formatter.line(for: closed, at: 0, isCursor: false).description.hasPrefix(" 1 ▸ 主菜"))
            #expect(
                formatter.line(for: Self.dishes[0], at: 1, isCursor: false).description.hasPrefix(
                    " 2     宮保雞丁  Kung Pao Chicken"))
            #expect(
                formatter.line(for: Self.dishes[3], at: 22, isCursor: false).description.hasPrefix("23       瀘州老窖特曲"))
        }

        @Test func everyLineIsExactlyTheWidthSoPricesAlignAtTheRightEdge() {
            for width in [100, 80, 60, 39, 20, 5] {
                let formatter = RowFormatter(width: width, rowCount: 1_111_110)
                for row in Self.dishes + [Self.group] {
                    for isCursor in [false, true] {
                        #expect(
                            DisplayWidth.of(formatter.line(for: row, at: 1_111_109, isCursor: isCursor).description)
                                == width)
                    }
                }
                #expect(DisplayWidth.of(formatter.line(for: nil, at: 3, isCursor: false).description) == width)
            }
            let formatter = RowFormatter(width: 100, rowCount: 30)
            let lines = Self.dishes.map { formatter.line(for: $0, at: 1, isCursor: false).description }
            #expect(lines[0].hasSuffix("辣辣             ¥38"))
            #expect(lines[1].hasSuffix("¥39.5"))
            #expect(lines[2].hasSuffix("辣辣辣素            ¥9.5"))
            #expect(lines[3].hasSuffix("500ml     ¥298"))
            #expect(lines[4].hasSuffix("¥1280"))
        }

        @Test func aSoldOutDishIsDimmedWithWhatAndWhyAndAnEscapeInTheReasonIsNotWritten() {
            var row = Self.dishes[0]
            row.availability = MenuRowAvailability(state: .soldOut, reason: "wok \u{1B}[2Jbusy")
            let formatter = RowFormatter(width: 90, rowCount: 30)
            let line = formatter.line(for: row, at: 1, isCursor: false)
            #expect(line.spans.first { $0.text.string == "宮保雞丁" }?.style == .dim)
            #expect(line.description.contains("sold out · wok"), "\(line.description)")
            #expect(!line.description.contains("\u{1B}"))
            #expect(line.spans.contains { $0.style == .error && $0.text.string.contains("sold out") })
            #expect(DisplayWidth.of(line.description) == 90)
            row.availability = MenuRowAvailability(state: .paused)
            #expect(formatter.line(for: row, at: 1, isCursor: true).description.contains("  paused"))
        }

        @Test func aLongTitleIsCutWithAnEllipsisBeforeThePriceColumn() {
            let formatter = RowFormatter(width: 44, rowCount: 30)
            let line = formatter.line(for: Self.dishes[1], at: 9, isCursor: false).description
            #expect(line.hasPrefix("10     鍋巴肉片  Siz…"))
            #expect(line.contains("…"))
            #expect(line.hasSuffix("¥39.5"))
        }

        @Test func pricesAreFormattedFromPriceAndCurrency() {
            #expect(RowFormatter.price(["price": .number(38), "currency": .string("CNY")]) == "¥38")
            #expect(RowFormatter.price(["price": .number(12.5), "currency": .string("CNY")]) == "¥12.5")
            #expect(RowFormatter.price(["price": .number(39.95), "currency": .string("USD")]) == "$39.95")
            #expect(RowFormatter.price(["price": .number(4.05), "currency": .string("EUR")]) == "€4.05")
            #expect(RowFormatter.price(["price": .number(12), "currency": .string("CHF")]) == "12 CHF")
            #expect(RowFormatter.price(["price": .number(36.5)]) == "36.5")
            #expect(RowFormatter.price(["price": .number(-2)]) == "-2")
            #expect(RowFormatter.price(["price": .string("38")]) == nil)
            #expect(RowFormatter.price(nil) == nil)
        }

        @Test func aPlaceholderShowsItsNumberUntilTheRowArrives() {
            let line = RowFormatter(width: 30, rowCount: 18850).line(for: nil, at: 301, isCursor: false).description
            #expect(line.hasPrefix("  302 …"))
        }
    }
}
