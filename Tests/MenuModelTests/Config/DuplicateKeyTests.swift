import Foundation
import Testing

@testable import MenuModel

/// A key given twice in one object is a config error at its JSON path, wherever it is: a node,
/// the document, or any depth of `attributes` (issue 11: a second `items` list left the first
/// list's nodes in preorder with no parent list, and the counts wrong).
@Suite struct DuplicateKeyTests {
    func problems(_ json: String) -> [ConfigProblem] { configProblems(json) }

    func duplicates(_ json: String) -> [String] {
        problems(json).filter { $0.kind == .duplicateKey }.map(\.path)
    }

    @Test func aSecondItemsListIsRefusedAndNoOrphanNodeIsLeft() {
        let json =
            #"{"items": [{"id": "g", "title": "G", "items": [{"id": "a", "title": "A"}], "items": [{"id": "b", "title": "B"}]}]}"#
        #expect(
            problems(json) == [
                ConfigProblem(path: "items[0].items", kind: .duplicateKey, value: "\"items\"", nodeID: "g")
            ])
    }

    @Test(arguments: [
        (#"{"id": "r", "id": "s", "title": "R"}"#, "items[0].id"),
        (#"{"id": "r", "title": "R", "title": "S"}"#, "items[0].title"),
        (#"{"id": "g", "title": "G", "items": [], "expanded": true, "expanded": false}"#, "items[0].expanded"),
        (#"{"id": "r", "title": "R", "attributes": {}, "attributes": {"a": 1}}"#, "items[0].attributes")
    ])
    func everyNodeKeyGivenTwiceIsRefused(node: String, path: String) {
        #expect(duplicates(#"{"items": [\#(node)]}"#) == [path])
    }

    @Test func theDocumentsKeysGivenTwiceAreRefused() {
        #expect(duplicates(#"{"title": "A", "items": [], "title": "B"}"#) == ["title"])
        #expect(
            duplicates(#"{"items": [{"id": "a", "title": "A"}], "items": [{"id": "b", "title": "B"}]}"#) == ["items"])
    }

    @Test func aKeyGivenTwiceAtAnyDepthOfTheAttributesIsRefusedWithItsPath() {
        let json = #"""
            {"items": [{"id": "g", "title": "G", "items": [{"id": "r", "title": "R", "attributes":
              {"price": 1, "price": 2, "tags": [{"k": 1}, {"k": 2, "k": 3}], "a b": {"x": [], "x": null}}}]}]}
            """#
        #expect(
            duplicates(json) == [
                "items[0].items[0].attributes.price",
                "items[0].items[0].attributes.tags[1].k",
                #"items[0].items[0].attributes["a b"].x"#
            ])
    }

    @Test func aKeyThatIsNoPlainNameIsQuotedAsJSONInThePathAndTheMessage() {
        let found = problems(#"{"items": [{"id": "r", "title": "R", "attributes": {"a\"b\n": 1, "a\"b\n": 2}}]}"#)
        #expect(
            found == [
                ConfigProblem(
                    path: #"items[0].attributes["a\"b\n"]"#, kind: .duplicateKey, value: #""a\"b\n""#, nodeID: "r")
            ])
    }

    @Test func theSameKeyInDifferentObjectsIsFine() {
        #expect(
            problems(
                #"{"items": [{"id": "r", "title": "R", "attributes": {"a": {"id": 1}, "b": {"id": 2}, "id": 3}}]}"#
            ).isEmpty)
    }

    @Test func anUnknownKeyGivenTwiceIsReportedAsUnknownEachTime() {
        let found = problems(#"{"items": [{"id": "r", "title": "R", "colour": 1, "colour": 2}]}"#)
        #expect(found.map(\.kind) == [.unknownKey, .unknownKey])
    }

    @Test func keysOnlyAllowedOnNodesAreUnknownAtTheTopEvenWhenRepeated() {
        let found = problems(#"{"items": [], "id": "a", "id": "b"}"#)
        #expect(found.map(\.kind) == [.unknownKey, .unknownKey])
    }

    @Test func theMessageNamesTheKeyAndSaysWhatToDo() {
        let problem = ConfigProblem(path: "items[0].items", kind: .duplicateKey, value: "\"items\"")
        #expect(problem.description == #"items[0].items: duplicate key "items"; give each key once per object"#)
    }
}
