import Foundation
import Testing
@testable import MenuModel

/// The menus shipped in `Config/` load and have the shapes the seeds describe.
@Suite struct ConfigFilesTests {
    static let configDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Config")

    func load(_ name: String) throws -> Menu {
        try Menu(contentsOfFile: Self.configDirectory.appendingPathComponent(name).path)
    }

    @Test func sichuanMenuHasTheSeedsGroupsAndDishesInOrder() throws {
        let menu = try load("menu.json")
        let view = FlattenedView(menu: menu)
        let top = view.rows(offset: 0, limit: 500).filter { $0.depth == 0 }.map(\.title)
        #expect(top == ["主菜", "早餐", "酒水"])
        let main = try #require(menu.node(withID: "main-courses"))
        #expect(menu.children(of: main).map(menu.title(of:)) ==
            ["宮保雞丁", "干燒魚", "回鍋肉", "麻婆豆腐", "家常豆腐", "黃燜鴨", "夫妻肺片", "鹽水鴨", "鍋巴肉片"])
        let breakfast = try #require(menu.node(withID: "breakfast"))
        #expect(menu.childCount(of: breakfast) == 5)
        #expect(menu.isExpandedByDefault(main) && menu.isExpandedByDefault(breakfast))
        #expect(menu.attributes(of: menu.children(of: main)[0])?["price"] != nil)
    }

    @Test func sichuanMenuCountsFollowCollapsingMainCourses() throws {
        var view = FlattenedView(menu: try load("menu.json"))
        let before = view.count
        let change = try view.toggle("main-courses")
        #expect(change.change == RowChange(at: 1, inserted: 0, removed: 9))
        #expect(view.count == before - 9)
    }

    @Test func settingsSidebarHasTheSeedsAccountTree() throws {
        let menu = try load("settings.json")
        let account = try #require(menu.node(withID: "account"))
        #expect(menu.children(of: account).map(menu.id(of:)) == ["profile", "privacy"])
        let privacy = try #require(menu.node(withID: "privacy"))
        #expect(menu.children(of: privacy).map(menu.title(of:)) == ["Blocked accounts", "Permissions"])
        #expect(menu.height >= 3)
    }
}
