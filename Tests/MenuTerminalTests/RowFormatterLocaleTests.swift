import MenuClient
import MenuTerminal
import Testing

extension TerminalTests {
    /// A row read in English (`menu-client --lang en` on a menu with locales) is not followed by its
    /// English name a second time.
    @Suite("Row lines in the menu's other locales")
    struct RowFormatterLocaleTests {
        @Test func aTitleInEnglishIsNotRepeatedByItsEnglishName() {
            let formatter = RowFormatter(width: 80, rowCount: 30)
            var group = RowFormatterTests.group
            group.title = "Main Courses"
            #expect(
                formatter.line(for: group, at: 0, isCursor: false).description.hasPrefix(" 1 ▾ Main Courses (9)   "))
            let chinese = RowFormatterTests.dish("宫保鸡丁", "Kung Pao Chicken", price: 38)
            #expect(
                formatter.line(for: chinese, at: 1, isCursor: false).description.hasPrefix(
                    " 2     宫保鸡丁  Kung Pao Chicken"))
        }
    }
}
