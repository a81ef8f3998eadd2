import Foundation
import Testing

@testable import MenuModel

/// A group's `minSelect` and `maxSelect` load as its ``SelectionRule``; each wrong one is a config
/// problem at its key, naming the node, the value and what would be right.
@Suite struct SelectionRuleConfigTests {
    static func group(_ rule: String, rows: Int = 3) -> String {
        let items = (0 ..< rows).map { #"{"id": "r\#($0)", "title": "R"}"# }.joined(separator: ",")
        return #"{"items": [{"id": "sides", "title": "Sides", \#(rule) "items": [\#(items)]}]}"#
    }

    @Test func aGroupsBoundsLoadAsItsRuleAndOtherGroupsHaveNone() throws {
        let menu = try Menu(
            jsonData: Data(
                #"{"items": [{"id": "sides", "title": "Sides", "minSelect": 1, "maxSelect": 2, "items": [{"id": "rice", "title": "Rice"}, {"id": "noodles", "title": "Noodles"}]}, {"id": "drinks", "title": "Drinks", "maxSelect": 1, "items": []}, {"id": "free", "title": "Free", "items": []}]}"#
                    .utf8))
        let sides = try #require(menu.node(withID: "sides"))
        let drinks = try #require(menu.node(withID: "drinks"))
        #expect(menu.selectionRule(of: sides) == SelectionRule(min: 1, max: 2))
        #expect(menu.selectionRule(of: drinks) == SelectionRule(min: nil, max: 1))
        #expect(menu.selectionRule(of: try #require(menu.node(withID: "free"))) == nil)
        #expect(menu.ruledGroups == [sides, drinks])
    }

    @Test(arguments: [
        (#""minSelect": -1,"#, "minSelect", "a whole number from 0 to 10000000", "-1"),
        (#""maxSelect": 0,"#, "maxSelect", "a whole number from 1 to 10000000", "0"),
        (#""maxSelect": 1.5,"#, "maxSelect", "a whole number from 1 to 10000000", "1.5"),
        (#""minSelect": "2","#, "minSelect", "a whole number from 0 to 10000000", "\"2\"")
    ])
    func aBoundThatIsNotAWholeNumberInRangeIsRefusedAtItsKey(
        rule: String, key: String, expected: String, value: String
    ) {
        let found = configProblems(Self.group(rule))
        #expect(
            found == [
                ConfigProblem(
                    path: "items[0].\(key)", kind: .wrongType(expected: expected), value: value, nodeID: "sides")
            ])
    }

    @Test func aMinimumAboveTheMaximumOrTheGroupsRowsIsRefusedWithBoth() {
        #expect(
            configProblems(Self.group(#""minSelect": 3, "maxSelect": 2,"#)) == [
                ConfigProblem(
                    path: "items[0].minSelect", kind: .selectionRuleConflict(maxSelect: 2), value: "3", nodeID: "sides")
            ])
        let aboveRows = configProblems(Self.group(#""minSelect": 4,"#))
        #expect(
            aboveRows == [
                ConfigProblem(
                    path: "items[0].minSelect", kind: .minSelectAboveLeaves(leaves: 3), value: "4", nodeID: "sides")
            ])
        #expect(aboveRows.first?.description.contains("above the 3 rows the group has") == true)
        // Exactly its rows is a rule that can be met.
        #expect(configProblems(Self.group(#""minSelect": 3,"#)).isEmpty)
    }

    @Test func aRuleOnARowIsRefusedNamingIt() {
        let found = configProblems(#"{"items": [{"id": "rice", "title": "Rice", "maxSelect": 1}]}"#)
        #expect(
            found == [ConfigProblem(path: "items[0].maxSelect", kind: .selectionRuleOnRow, value: "1", nodeID: "rice")])
    }

    @Test func aBoundGivenTwiceIsADuplicateKey() {
        let found = configProblems(Self.group(#""maxSelect": 1, "maxSelect": 2,"#))
        #expect(found.map(\.kind) == [.duplicateKey])
    }
}
