import Foundation
import Testing

@testable import MenuModel

/// A node's `whenUnavailable` (`show`, the default, or `hide`) loads inherited: a node without one
/// takes its nearest ancestor's. Any other value is a config problem at its key, naming the node.
@Suite struct WhenUnavailableConfigTests {
    static let menu = #"""
        {"items": [
          {"id": "mains", "title": "Mains", "whenUnavailable": "hide", "items": [
            {"id": "fish", "title": "Fish"},
            {"id": "specials", "title": "Specials", "whenUnavailable": "show", "items": [{"id": "eel", "title": "Eel"}]},
            {"id": "soups", "title": "Soups", "items": [{"id": "hot-sour", "title": "Hot and sour"}]}
          ]},
          {"id": "drinks", "title": "Drinks", "items": [{"id": "tea", "title": "Tea", "whenUnavailable": "hide"}]},
          {"id": "rice", "title": "Rice"}
        ]}
        """#

    @Test func aNodesSettingIsItsOwnOrElseItsNearestAncestors() throws {
        let menu = try Menu(jsonData: Data(Self.menu.utf8))
        let hiding = menu.nodes.filter(menu.hidesWhenUnavailable).map(menu.id(of:))
        #expect(hiding == ["mains", "fish", "soups", "hot-sour", "tea"])
        #expect(menu.hidesAnyWhenUnavailable)
    }

    @Test func withoutAnyHideNothingHides() throws {
        let menu = try Menu(
            jsonData: Data(#"{"items": [{"id": "a", "title": "A", "whenUnavailable": "show", "items": []}]}"#.utf8))
        #expect(!menu.hidesAnyWhenUnavailable)
        #expect(!menu.hidesWhenUnavailable(1))
    }

    @Test(arguments: [#""hidden""#, "true", "null", #""HIDE""#])
    func anyOtherValueIsRefusedAtItsKey(value: String) {
        let found = configProblems(
            #"{"items": [{"id": "tea", "title": "Tea", "whenUnavailable": \#(value)}]}"#)
        #expect(
            found == [
                ConfigProblem(
                    path: "items[0].whenUnavailable", kind: .wrongType(expected: #""show" or "hide""#),
                    value: value, nodeID: "tea")
            ])
        #expect(found.first?.description.contains(#"must be "show" or "hide", found \#(value)"#) == true)
    }

    @Test func theDocumentDoesNotTakeIt() {
        let found = configProblems(#"{"whenUnavailable": "hide", "items": []}"#)
        #expect(found.map(\.kind) == [.unknownKey])
    }
}
