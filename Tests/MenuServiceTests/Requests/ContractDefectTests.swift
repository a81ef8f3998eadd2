import Foundation
import HTTPCore
import MenuServiceTestSupport
import Testing

@testable import MenuService
@testable import MenuSessions

/// The contract defects a new user found (issue 11, item 7): a default page larger than
/// `--max-limit`, a PUT body key given twice, a mistyped query parameter silently ignored, and
/// messages that blamed the wrong part of the request.
/// (The default page is ContractDefectTransportTests, over both transports.)
@Suite struct ContractDefectTests {
    // MARK: A key given twice in the PUT body

    @Test(arguments: [
        #"{"isExpanded":true,"isExpanded":false}"#,
        #"{"isExpanded":false,"isExpanded":false}"#,
        #"{"isExpanded":true,"is\u0045xpanded":false}"#,  // the same key once unescaped
        #"{"isExpanded":true,"a":1,"a":2}"#,
        #"{"\u00e9":1,"é":2,"isExpanded":true}"#
    ])
    func aTopLevelKeyGivenTwiceIsInvalidBody(body: String) throws {
        let service = try makeService()
        let response = service.call("PUT", "/groups/drinks/expansion", body: body)
        #expect(response.status == 400, "\(body)")
        #expect(response.errorCode == "invalid_body")
        let message = (response.json["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("more than once"), "\(message)")
        #expect((service.store as? InMemorySessionStore)?.count == 0, "a refused write must not create a session")
    }

    /// A key twice in an object nested in a value the route ignores is refused too: a proxy or
    /// a later version that reads that value could read the other copy.
    @Test(arguments: [
        (route: "/groups/drinks/expansion", body: #"{"x":{"a":1,"a":2},"isExpanded":false}"#),
        (route: "/groups/drinks/expansion", body: #"{"isExpanded":false,"x":[[{"b":{"a":1,"\u0061":2}}]]}"#),
        (route: "/expansion", body: #"{"all":"expanded","x":{"a":{},"a":[]}}"#)
    ])
    func aKeyRepeatedInsideAnIgnoredValueIsInvalidBody(route: String, body: String) throws {
        let service = try makeService()
        let response = service.call("PUT", route, body: body)
        #expect(response.status == 400, "\(body)")
        #expect(response.errorCode == "invalid_body")
        let message = (response.json["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains(#"the key "a" more than once in one object"#), "\(message)")
        #expect((service.store as? InMemorySessionStore)?.count == 0, "a refused write must not create a session")
    }

    @Test func theSameKeyInSiblingObjectsIsAccepted() throws {
        let response = try makeService().call(
            "PUT", "/groups/drinks/expansion", body: #"{"x":[{"a":1},{"a":2}],"y":{"a":3},"isExpanded":false}"#)
        #expect(response.status == 200)
        #expect(response.json["isExpanded"] as? Bool == false)
    }

    /// The body parser agrees with Foundation's JSON parser on what is JSON at all (bodies
    /// without repeated keys), so only the duplicate rule is new.
    @Test(arguments: [
        #"{"isExpanded":true}"#, #" {"isExpanded" : false } "#, "{\"isExpanded\":true}\n",
        #"{"isExpanded":true"#, #"{isExpanded:true}"#, #"{"isExpanded":True}"#, #"{"isExpanded":true} {}"#,
        #"{"a":[1,-0.5e+3,"x\n\"y\\",null,{}],"isExpanded":true}"#, #"{"a":01,"isExpanded":true}"#,
        #"{"a":1.,"isExpanded":true}"#, #"{"a":.5,"isExpanded":true}"#, #"{"a":-,"isExpanded":true}"#,
        #"{"a":"\ud83d\ude00","isExpanded":true}"#, #"{"a":"\x","isExpanded":true}"#,
        #"{"a":"\u12","isExpanded":true}"#,
        "{\"a\":\"tab\there\",\"isExpanded\":true}", #"{"a":[1 2],"isExpanded":true}"#, #"{"a":nul,"isExpanded":true}"#,
        #"{"isExpanded":true}x"#, #"{"a":1e5,"isExpanded":false}"#
    ])
    func theBodyParserAcceptsExactlyWhatFoundationReadsAsJSON(body: String) throws {
        let bytes = Array(body.utf8)
        let foundation = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
        let ours = Result { () throws(APIError) -> Bool in try MenuAPI.parseExpansionBody(bytes).isExpanded }
        #expect((try? ours.get()) == foundation?["isExpanded"] as? Bool, "\(body): \(ours)")
    }

    /// Where Foundation is more lenient than RFC 8259 (and than JavaScript's `JSON.parse` and
    /// Python's `json.loads`), the body parser follows the RFC.
    @Test(arguments: [#"{"isExpanded":true,}"#, "\u{FEFF}{\"isExpanded\":true}", #"{"a":[1,],"isExpanded":true}"#])
    func whatOnlyFoundationAcceptsIsInvalidBody(body: String) throws {
        #expect(throws: APIError.self) { try MenuAPI.parseExpansionBody(Array(body.utf8)) }
    }

    @Test func nestingPastTheDepthLimitIsInvalidBodyNotACrash() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let response = try makeService().call(
            "PUT", "/groups/drinks/expansion", body: #"{"a":"# + deep + #","isExpanded":true}"#)
        #expect(response.errorCode == "invalid_body")
    }

    // MARK: Query parameters a route does not take

    /// Every route, with the path a request to it uses.
    static let requests: [(method: String, path: String)] = Endpoint.methodRoutes.map { method, route in
        (
            method,
            route.template.replacingOccurrences(
                of: "{id}", with: route.template.hasPrefix("/sessions") ? "AAAAAAAAAAAAAAAAAAAAAA" : "drinks")
        )
    }

    @Test(arguments: 0 ..< Endpoint.methodRoutes.count)
    func aParameterTheRouteDoesNotTakeIsInvalidParameterNamingIt(route: Int) throws {
        let (method, path) = Self.requests[route]
        for query in [[("limt", "7")], [("limit", "2"), ("verbose", nil)], [("Offset", "1")]] as [[(String, String?)]] {
            let service = try makeService()
            let response = service.call(
                method, path, query: query, body: method == "PUT" ? #"{"isExpanded":true}"# : nil)
            #expect(response.status == 400, "\(method) \(path) \(query)")
            #expect(response.errorCode == "invalid_parameter")
            let message = (response.json["error"] as? [String: Any])?["message"] as? String ?? ""
            let unknown = query.first {
                $0.0 != "limit" || !Endpoint.methodRoutes[route].route.query.contains { "\($0)" == "limit" }
            }!.0
            #expect(message.contains("\"\(unknown)\""), "\(message)")
            #expect(message.contains("\(method) \(Endpoint.methodRoutes[route].route.template) takes"), "\(message)")
            #expect((service.store as? InMemorySessionStore)?.count == 0, "a refused write must not create a session")
        }
    }

    @Test func rowsStillTakesOffsetAndLimit() throws {
        let response = try makeService().call("GET", "/rows", query: [("offset", "1"), ("limit", "2")])
        #expect(response.status == 200)
        #expect((response.json["rows"] as? [Any])?.count == 2)
    }

    // MARK: Messages

    @Test(arguments: ["abc", "AAAAAAAAAAAAAAAAAAAAA!", "AAAAAAAAAAAAAAAAAAAAAA"])
    func theOldSessionPathNamesTheHeaderRouteAndNeverEchoesTheID(id: String) throws {
        let response = try makeService().call("DELETE", "/sessions/\(id)")
        #expect(response.status == 404)
        #expect(response.errorCode == "moved")
        let message = (response.json["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("DELETE /session with the id in the header X-Session-Id"), "\(message)")
        #expect(!message.contains(id), "\(message)")
    }

    @Test func theNotFoundHintListsEveryRoute() throws {
        let response = try makeService().call("GET", "/menus")
        #expect(response.status == 404)
        let message = (response.json["error"] as? [String: Any])?["message"] as? String ?? ""
        for route in Endpoint.routes {
            #expect(
                message.contains(route.methods.joined(separator: " or ") + " " + route.template),
                "\(route.template) missing from \(message)")
        }
        #expect(
            message
                == "no resource at /menus; the routes are GET or HEAD /rows, GET or HEAD /count, GET or HEAD /menu, GET or HEAD /search, GET or HEAD /changes, GET or HEAD /healthz, GET or HEAD /readyz, "
                + "POST /sessions, GET or HEAD /session, DELETE /session, POST /groups/{id}/toggle, PUT /groups/{id}/expansion, PUT /expansion, "
                + "GET or HEAD /nodes/{id}, POST /nodes/{id}/reveal, PUT /nodes/{id}/selection, GET or HEAD /selection, PUT /selection, GET or HEAD /metrics, GET or HEAD /, GET or HEAD /app.js, GET or HEAD /app.css"
        )
    }
}
