import Foundation
import Testing

@testable import MenuModel

/// The config format: what loads, and every kind of error with its JSON path.
@Suite struct MenuLoadingTests {
    func problems(_ json: String) -> [ConfigProblem] { configProblems(json) }

    func single(_ json: String) -> ConfigProblem? {
        let found = problems(json)
        #expect(found.count == 1, "expected one problem, got \(found)")
        return found.first
    }

    @Test func validMenuLoadsWithTitleIDsAndStructure() throws {
        let menu = try Menu(
            jsonData: Data(
                """
                {"title": "Cafe", "items": [{"id": "g", "title": "Group", "expanded": true, "items": [{"id": "r", "title": "Row"}]}]}
                """.utf8))
        #expect(menu.title == "Cafe")
        #expect(menu.nodeCount == 2)
        let g = try #require(menu.node(withID: "g"))
        let r = try #require(menu.node(withID: "r"))
        #expect(menu.isGroup(g) && !menu.isGroup(r))
        #expect(menu.isExpandedByDefault(g))
        #expect(menu.parent(of: r) == g)
        #expect(menu.parent(of: g) == nil)
        #expect(menu.depth(of: r) == 1)
        #expect(menu.children(of: g) == [r])
    }

    @Test func attributesKeepTheirJSONTypesAndNumbers() throws {
        let menu = try Menu(
            jsonData: Data(
                """
                {"items": [{"id": "r", "title": "Row", "attributes": {"price": 38, "half": 12.5, "hot": true,
                  "tags": ["a", 1], "none": null, "nested": {"k": "v"}, "big": 1e300}}]}
                """.utf8))
        let attributes = try #require(menu.attributes(of: menu.node(withID: "r")!))
        #expect(attributes["price"] == .integer(38))
        #expect(attributes["half"] == .number(12.5))
        #expect(attributes["hot"] == .bool(true))
        #expect(attributes["tags"] == .array([.string("a"), .integer(1)]))
        #expect(attributes["none"] == .null)
        #expect(attributes["nested"] == .object(["k": .string("v")]))
        #expect(attributes["big"] == .number(JSONNumber(text: "1e300")!))
        let encoded = String(decoding: try JSONEncoder().encode(attributes["half"]!), as: UTF8.self)
        #expect(encoded == "12.5")
    }

    @Test func versionIsStableForEqualContentAndChangesWithIt() throws {
        let a = try Menu(jsonData: Data(#"{"items": [{"id": "r", "title": "Row"}]}"#.utf8))
        let b = try Menu(jsonData: Data(#"{"items": [{"id": "r", "title": "Row"}]}"#.utf8))
        let c = try Menu(jsonData: Data(#"{"items": [{"id": "r", "title": "Row 2"}]}"#.utf8))
        #expect(a.version == b.version)
        #expect(a.version != c.version)
        #expect(a.version.count == 16)
    }

    @Test func emptyMenuIsValid() throws {
        let menu = try Menu(jsonData: Data(#"{"items": []}"#.utf8))
        #expect(FlattenedView(menu: menu).count == 0)
        #expect(FlattenedView(menu: menu).rows(offset: 0, limit: 10).isEmpty)
    }

    @Test func invalidJSONReportsLineAndColumn() {
        let problem = single("{\n  \"items\": [,]\n}")
        guard case .invalidJSON(let line, let column)? = problem?.kind else {
            Issue.record("expected invalidJSON, got \(String(describing: problem))")
            return
        }
        #expect(line == 2)
        #expect(column != nil)
        #expect(problem?.description.contains("line 2") == true)
    }

    @Test func unknownKeyIsNamedWithItsPath() {
        let problem = single(
            #"{"items": [{"id": "a", "title": "A", "items": [{"id": "b", "title": "B", "colour": 1}]}]}"#)
        #expect(
            problem
                == ConfigProblem(path: "items[0].items[0].colour", kind: .unknownKey, value: "\"colour\"", nodeID: "b"))
    }

    @Test func unknownTopLevelKeyIsAnError() {
        #expect(
            single(#"{"items": [], "version": 2}"#)
                == ConfigProblem(path: "version", kind: .unknownKey, value: "\"version\""))
    }

    @Test func missingItemsAtTheTopIsAnError() {
        #expect(single(#"{"title": "x"}"#) == ConfigProblem(path: "$", kind: .missingKey, value: "\"items\""))
    }

    @Test func wrongTypeNamesTheExpectedTypeAndTheValue() {
        let problem = single(#"{"items": [{"id": 7, "title": "A"}]}"#)
        #expect(problem == ConfigProblem(path: "items[0].id", kind: .wrongType(expected: "a string"), value: "7"))
    }

    @Test func nodeThatIsNotAnObjectIsAWrongType() {
        #expect(
            single(#"{"items": ["soup"]}"#)
                == ConfigProblem(path: "items[0]", kind: .wrongType(expected: "an object"), value: "\"soup\""))
    }

    @Test func documentThatIsNotAnObjectIsAWrongType() {
        #expect(single(#"[1, 2]"#)?.kind == .wrongType(expected: "an object"))
    }

    @Test func missingIDAndTitleAreBothReported() {
        let found = problems(#"{"items": [{"items": []}]}"#)
        #expect(
            found == [
                ConfigProblem(path: "items[0]", kind: .missingKey, value: "\"id\""),
                ConfigProblem(path: "items[0]", kind: .missingKey, value: "\"title\"")
            ])
    }

    @Test func duplicateIDNamesBothPlaces() {
        let problem = single(
            #"{"items": [{"id": "a", "title": "A", "items": [{"id": "x", "title": "X"}]}, {"id": "x", "title": "Y"}]}"#)
        #expect(
            problem
                == ConfigProblem(
                    path: "items[1].id", kind: .duplicateID(firstPath: "items[0].items[0].id"), value: "\"x\"",
                    nodeID: "x"))
    }

    @Test(arguments: ["", "has space", "slash/id", "ümlaut", String(repeating: "a", count: 129)])
    func badIDCharactersOrLengthAreRefused(id: String) {
        let problem = single(#"{"items": [{"id": "\#(id)", "title": "A"}]}"#)
        #expect(problem?.path == "items[0].id")
        #expect(problem?.kind == .invalidID)
    }

    @Test func idOf128AllowedCharactersIsAccepted() {
        #expect(problems(#"{"items": [{"id": "\#(String(repeating: "aZ0._~-x", count: 16))", "title": "A"}]}"#).isEmpty)
    }

    @Test func emptyTitleIsRefused() {
        #expect(
            single(#"{"items": [{"id": "a", "title": "  "}]}"#)
                == ConfigProblem(path: "items[0].title", kind: .emptyTitle, value: "\"  \"", nodeID: "a"))
    }

    @Test func expandedOnARowIsRefused() {
        #expect(
            single(#"{"items": [{"id": "a", "title": "A", "expanded": true}]}"#)
                == ConfigProblem(path: "items[0].expanded", kind: .expandedOnRow, value: "true", nodeID: "a"))
    }

    @Test func nestingBeyondTheLimitIsRefused() {
        var json = #"{"id": "leaf", "title": "L"}"#
        for level in 0 ..< MenuBuilder.depthLimit { json = #"{"id": "g\#(level)", "title": "G", "items": [\#(json)]}"# }
        let found = problems(#"{"items": [\#(json)]}"#)
        #expect(found.count == 1)
        #expect(found.first?.kind == .tooDeep(limit: MenuBuilder.depthLimit))
    }

    @Test func menuOverTheNodeLimitIsRefusedOnce() {
        let items = (0 ..< 10).map { #"{"id": "n\#($0)", "title": "T"}"# }.joined(separator: ",")
        do {
            _ = try Menu(jsonData: Data(#"{"items": [\#(items)]}"#.utf8), maxNodes: 8)
            Issue.record("expected an error")
        } catch {
            #expect(error.problems == [ConfigProblem(path: "items[8]", kind: .tooManyNodes(limit: 8), value: "")])
        }
    }

    @Test func everyProblemIsReportedNotJustTheFirst() {
        let found = problems(
            #"{"items": [{"id": "a b", "title": ""}, {"id": "c", "title": "C", "expanded": "yes", "items": 3}]}"#)
        #expect(found.map(\.path) == ["items[0].id", "items[0].title", "items[1].expanded", "items[1].items"])
    }

    @Test func problemsBeyondTheCapAreCounted() {
        let items = (0 ..< 150).map { #"{"id": "bad id \#($0)", "title": "T"}"# }.joined(separator: ",")
        do {
            _ = try Menu(jsonData: Data(#"{"items": [\#(items)]}"#.utf8))
            Issue.record("expected an error")
        } catch {
            #expect(error.problems.count == MenuConfigError.problemLimit)
            #expect(error.omittedCount == 50)
            #expect(error.description.contains("and 50 more"))
        }
    }

    @Test func directoryInsteadOfAFileSaysSo() {
        do {
            _ = try Menu(contentsOfFile: NSTemporaryDirectory())
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("is a directory"))
        }
    }

    @Test func unreadableFileNamesThePath() {
        do {
            _ = try Menu(contentsOfFile: "/nonexistent/menu.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("/nonexistent/menu.json"))
        }
    }
}
