import Foundation
import HTTPCore
import MenuModel
import MenuServiceTestSupport
import MenuTestSupport
import Testing

@testable import MenuService
@testable import MenuSessions

/// The `POST /sessions` body (``PortableExpansionBodyParser``): what it reads, and every refusal
/// with a message naming the key, position or value to fix; a refused body creates no session.
@Suite struct PortableExpansionBodyTests {
    typealias Flip = PortableState.Flip
    typealias Mark = PortableState.Mark

    func parse(_ body: String) -> Result<PortableState, APIError> {
        Result { () throws(APIError) in try MenuAPI.parsePortableExpansionBody(Array(body.utf8)) }
    }

    @Test func everyKeyIsReadWithEscapesDecodedAndFlipsExpandedFirst() throws {
        let body =
            #"{"collapsed": ["soups", "be\u0065r"], "marks": [{"mode": "collapsed", "id": "drinks"}, {"id": "a.b~c_d-9", "mode": "expanded"}], "base": "expanded", "expanded": ["noodles"]}"#
        #expect(
            try parse(body).get()
                == PortableState(
                    base: .expanded,
                    marks: [Mark(id: "drinks", mode: .collapsed), Mark(id: "a.b~c_d-9", mode: .expanded)],
                    flips: [
                        Flip(id: "noodles", isExpanded: true), Flip(id: "soups", isExpanded: false),
                        Flip(id: "beer", isExpanded: false)
                    ]))
    }

    @Test(arguments: ["", "{}", " { } ", #"{"marks": [], "expanded": [], "collapsed": []}"#, #"{"base": "default"}"#])
    func anEmptyBodyOrObjectIsTheDefaultExpansion(body: String) throws {
        #expect(try parse(body).get() == PortableState())
    }

    @Test func unknownKeysAreIgnoredAtTheTopAndInAMark() throws {
        let body =
            #"{"note": {"a": 1, "b": {"a": 2}}, "marks": [{"id": "drinks", "mode": "expanded", "since": [1, 2]}], "version": "x"}"#
        #expect(try parse(body).get() == PortableState(marks: [Mark(id: "drinks", mode: .expanded)]))
    }

    /// Each wrong body and what its message must say.
    static let refusals: [(body: String, message: String)] = [
        (" ", "not valid JSON (at byte 1)"),
        (#"{"expanded": ["a",]}"#, "not valid JSON (at byte 18)"),
        (#"{"expanded": ["a""#, "not valid JSON (at byte 17)"),
        (#"{"expanded": ["a"]} x"#, "not valid JSON (at byte 20)"),
        ("\u{FEFF}{}", "not valid JSON (at byte 0)"),
        (#"["drinks"]"#, "the body must be a JSON object"),
        (#"{"base": "expanded", "base": "collapsed"}"#, #"the body has the key "base" more than once"#),
        (#"{"base": "expanded", "b\u0061se": "expanded"}"#, #"the body has the key "base" more than once"#),
        (#"{"marks": [{"id": "a", "id": "b", "mode": "expanded"}]}"#, #"marks[0] has the key "id" more than once"#),
        (#"{"x": {"a": 1, "a": 2}}"#, #"x (or an object nested in it) has the key "a" more than once"#),
        (
            #"{"expanded": [], "x": [{"b": {"a": 1, "\u0061": 2}}]}"#,
            #"x (or an object nested in it) has the key "a" more than once"#
        ),
        (
            #"{"marks": [{"id": "a", "mode": "expanded", "note": {"k": 1, "k": 2}}]}"#,
            #"marks[0].note (or an object nested in it) has the key "k" more than once"#
        ),
        (#"{"base": "open"}"#, #"base must be "default" or "expanded" or "collapsed""#),
        (#"{"base": 1}"#, "base must be a string"),
        (#"{"marks": [{"id": "a", "mode": "default"}]}"#, #"marks[0].mode must be "expanded" or "collapsed""#),
        (#"{"marks": [{"id": "a"}]}"#, #"marks[0] must have "mode""#),
        (#"{"marks": [{"mode": "expanded"}]}"#, #"marks[0] must have "id""#),
        (#"{"marks": ["a"]}"#, "marks[0] must be a JSON object"),
        (#"{"marks": {"id": "a"}}"#, "marks must be an array"),
        (#"{"expanded": "drinks"}"#, "expanded must be an array"),
        (#"{"expanded": ["a", 7]}"#, "expanded[1] must be a string"),
        (#"{"collapsed": [null]}"#, "collapsed[0] must be a string"),
        (
            #"{"expanded": [""]}"#,
            #"expanded[0] must be a group id, 1 to 128 characters from A-Z a-z 0-9 . _ ~ -; found """#
        ),
        (#"{"expanded": ["a b"]}"#, #"found "a b""#),
        (#"{"collapsed": ["é"]}"#, #"collapsed[0] must be a group id"#),
        ("{\"expanded\": [\"" + String(repeating: "a", count: 129) + "\"]}", #"expanded[0] must be a group id"#),
        (#"{"expanded": ["drinks", "beer", "drinks"]}"#, #"the id "drinks" is both expanded[0] and expanded[2]"#),
        (
            #"{"expanded": ["drinks"], "collapsed": ["dr\u0069nks"]}"#,
            #"the id "drinks" is both expanded[0] and collapsed[0]"#
        ),
        (
            #"{"marks": [{"id": "a", "mode": "expanded"}, {"id": "a", "mode": "collapsed"}]}"#,
            #"the id "a" is both marks[0] and marks[1]"#
        ),
        (#"{"expansion": {"base": "default"}}"#, #"send the value of "expansion" from GET /session"#),
        (#"{"expanded": [[[[]]]]}"#, "expanded[0] must be a string")
    ]

    @Test(arguments: 0 ..< refusals.count)
    func aWrongBodyIsInvalidBodyNamingWhatToFix(refusal: Int) throws {
        let (body, message) = Self.refusals[refusal]
        let service = try makeService()
        let response = service.call("POST", "/sessions", body: body)
        #expect(response.status == 400, "\(body)")
        #expect(response.errorCode == "invalid_body")
        let said = (response.json["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(said.contains(message), "\(body): \(said)")
        #expect((service.store as? InMemorySessionStore)?.count == 0, "a refused body must not create a session")
    }

    @Test func aMarkAndAFlipMayNameTheSameGroup() throws {
        #expect(
            try parse(#"{"marks": [{"id": "a", "mode": "collapsed"}], "expanded": ["a"]}"#).get()
                == PortableState(marks: [Mark(id: "a", mode: .collapsed)], flips: [Flip(id: "a", isExpanded: true)])
        )
    }

    @Test func aGrammarErrorAfterAWrongValueIsReportedAsTheGrammarError() throws {
        guard case .failure(.invalidBody(let message)) = parse(#"{"base": 1, "expanded": [}"#) else {
            Issue.record("accepted")
            return
        }
        #expect(message.hasPrefix("the body is not valid JSON"), "\(message)")
    }

    @Test func nestingPastTheDepthLimitIsInvalidBodyNotACrash() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        for body in [#"{"a":"# + deep + "}", #"{"marks":[{"x":"# + deep + "}]}", deep] {
            guard case .failure(.invalidBody(let message)) = parse(body) else {
                Issue.record("accepted")
                continue
            }
            #expect(message.contains("deeper than 64 levels"), "\(message)")
        }
    }

    /// On everything Foundation reads as a JSON object with arrays of strings (no repeated keys,
    /// ids of the id form), the parser reads the same ids.
    @Test(arguments: [
        #"{"expanded":["a","b"],"collapsed":["c"]}"#, #"  {"collapsed" : [ "x" ] }"#,
        "{\"expanded\":[\"\\u0061\"]}\r\n",
        #"{"expanded":["a"],"other":[1,-0.5e+3,"x\n\"y\\",null,{},true,false]}"#, #"{"expanded":["a"],"n":01}"#,
        #"{"expanded":["a"],"n":1.}"#, #"{"expanded":["a"],"s":"\ud83d\ude00"}"#, #"{"expanded":["a"],"s":"\ud83d"}"#,
        #"{"expanded":["a"] "collapsed":[]}"#, #"{"expanded":["a"],"s":"\x"}"#
    ])
    func theParserReadsTheIDsFoundationReadsAndRefusesWhatItCannotRead(body: String) throws {
        let foundation = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
        let ours = try? parse(body).get()
        #expect(
            ours?.flips.filter(\.isExpanded).map(\.id) == foundation.map { $0["expanded"] as? [String] ?? [] },
            "\(body)")
        #expect(
            ours?.flips.filter { !$0.isExpanded }.map(\.id) == foundation.map { $0["collapsed"] as? [String] ?? [] },
            "\(body)")
    }

    @Test func moreEntriesThanTheChangeLimitIsTooManyChangesAndCreatesNothing() throws {
        let menu = try sichuanMenu()
        let store = InMemorySessionStore(menu: menu, maxChangedGroups: 2)
        let service = MenuAPI(menu: menu, store: store)
        let refused = service.call("POST", "/sessions", body: #"{"collapsed": ["drinks", "beer", "baijiu"]}"#)
        #expect(refused.status == 409 && refused.errorCode == "too_many_changes")
        #expect(store.count == 0)
        // Ids that name no group, and flips that change nothing, do not count.
        let accepted = service.call(
            "POST", "/sessions",
            body: #"{"collapsed": ["drinks", "beer", "mapo-tofu", "nope"], "expanded": ["baijiu"]}"#)
        #expect(accepted.status == 201)
        #expect(accepted.json["ignored"] as? [String] == ["mapo-tofu", "nope"])
    }
}
