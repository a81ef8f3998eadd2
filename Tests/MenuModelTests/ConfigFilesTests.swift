import Foundation
import Testing

@testable import MenuModel

/// Every menu shipped in `Config/` loads and is a working table. Nothing here depends on what
/// the files say (their dishes, titles or counts may change); the tests that need a known menu
/// serve their own (`Tests/Fixtures/`).
@Suite struct ConfigFilesTests {
    static let configDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Config")

    static var shippedConfigs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: configDirectory.path)) ?? []).filter {
            $0.hasSuffix(".json")
        }.sorted()
    }

    @Test func theShippedConfigsIncludeTheRestaurantMenuAndTheSettingsSidebar() {
        #expect(Set(Self.shippedConfigs).isSuperset(of: ["menu.json", "settings.json"]))
    }

    @Test(
        "a shipped config loads, has groups, and each (empty ones too) group's toggle and back changes the table as its subtree says",
        arguments: shippedConfigs)
    func aShippedConfigIsAWorkingTable(name: String) throws {
        let menu = try Menu(contentsOfFile: Self.configDirectory.appendingPathComponent(name).path)
        #expect(menu.nodeCount > 0)
        let groups = menu.nodes.filter(menu.isGroup)
        #expect(!groups.isEmpty, "a menu without groups has nothing to expand")
        for group in groups {
            var view = FlattenedView(menu: menu)
            let before = (view.count, view.rows(offset: 0, limit: 10_000))
            let change = try view.toggle(menu.id(of: group))
            if let splice = change.change {
                #expect(view.count == before.0 + splice.inserted - splice.removed)
            } else {
                #expect(view.count == before.0, "a hidden group's toggle changes no row")
            }
            _ = try view.toggle(menu.id(of: group))
            #expect(view.count == before.0 && view.rows(offset: 0, limit: 10_000) == before.1)
        }
    }
}
