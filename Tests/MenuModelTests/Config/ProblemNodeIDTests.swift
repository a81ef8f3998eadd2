import Foundation
import Testing

@testable import MenuModel

/// Every config problem inside a node names that node's id when it has a valid one, whatever the
/// key order: on a large menu a path alone is hard to find.
@Suite struct ProblemNodeIDTests {
    @Test func aProblemBeforeTheIDInTheObjectStillNamesIt() {
        let found = configProblems(
            #"{"items": [{"id": "g", "title": "G", "items": [{"title": " ", "colour": 1, "id": "mapo-tofu"}]}]}"#)
        #expect(
            found == [
                ConfigProblem(path: "items[0].items[0].title", kind: .emptyTitle, value: "\" \"", nodeID: "mapo-tofu"),
                ConfigProblem(
                    path: "items[0].items[0].colour", kind: .unknownKey, value: "\"colour\"", nodeID: "mapo-tofu")
            ])
        #expect(
            found.first?.description
                == #"items[0].items[0].title (node "mapo-tofu"): title must be a non-empty string, found " ""#)
    }

    @Test func theNodeItselfIsNamedForAWholeNodeProblem() {
        #expect(
            configProblems(#"{"items": [{"id": "soup"}]}"#) == [
                ConfigProblem(path: "items[0]", kind: .missingKey, value: "\"title\"", nodeID: "soup")
            ])
    }

    @Test func aProblemInsideTheAttributesNamesTheNode() {
        let found = configProblems(#"{"items": [{"id": "r", "title": "R", "attributes": {"a": 1, "a": 2}}]}"#)
        #expect(
            found == [ConfigProblem(path: "items[0].attributes.a", kind: .duplicateKey, value: "\"a\"", nodeID: "r")])
    }

    @Test func aParentIsNotNamedForAnElementOfItsItemsThatIsNoNode() {
        let found = configProblems(#"{"items": [{"id": "g", "title": "G", "items": ["soup"]}]}"#)
        #expect(
            found == [
                ConfigProblem(path: "items[0].items[0]", kind: .wrongType(expected: "an object"), value: "\"soup\"")
            ])
    }

    @Test func aParentIsNamedForItsOwnProblemsAfterItsChildren() {
        let found = configProblems(
            #"{"items": [{"id": "g", "items": [{"id": "r", "title": "R"}], "colour": 1, "title": "G"}]}"#)
        #expect(found == [ConfigProblem(path: "items[0].colour", kind: .unknownKey, value: "\"colour\"", nodeID: "g")])
    }

    @Test func anInvalidOrMissingIDIsNotNamed() {
        let found = configProblems(#"{"items": [{"id": "a b", "title": ""}, {"title": "T", "expanded": true}]}"#)
        #expect(found.map(\.nodeID) == [nil, nil, nil, nil])
        #expect(found.map(\.path) == ["items[0].id", "items[0].title", "items[1]", "items[1].expanded"])
    }

    @Test func documentProblemsNameNoNode() {
        #expect(configProblems(#"{"items": [], "colour": 1}"#).map(\.nodeID) == [nil])
        #expect(configProblems(#"{"title": "x"}"#).map(\.nodeID) == [nil])
    }

    @Test func aNodeOverTheDepthLimitNamesNoNode() {
        var json = #"{"id": "leaf", "title": "L"}"#
        for level in 0 ..< MenuBuilder.depthLimit { json = #"{"id": "g\#(level)", "title": "G", "items": [\#(json)]}"# }
        let found = configProblems(#"{"items": [\#(json)]}"#)
        #expect(found.map(\.kind) == [.tooDeep(limit: MenuBuilder.depthLimit)])
        #expect(found.first?.nodeID == nil)
    }
}
