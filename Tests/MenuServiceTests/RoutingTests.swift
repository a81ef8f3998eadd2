import Foundation
import HTTPCore
import HTTPServer
import Testing
@testable import MenuApp
@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable
import MenuModel

/// The HTTP contract without a socket: request value in, response value out.
@Suite struct RoutingTests {
    @Test func rowsDefaultToTheFirstFiftyInTheDefaultExpansion() throws {
        let response = try makeService().call("GET", "/rows")
        #expect(response.status == 200)
        let json = response.json
        #expect(json["count"] as? Int == 30)
        #expect(json["leafCount"] as? Int == 24)
        #expect(json["offset"] as? Int == 0)
        #expect(json["limit"] as? Int == 50)
        #expect((json["rows"] as? [Any])?.count == 30)
        #expect(json["version"] as? String == (try sichuanMenu()).version)
    }

    @Test func rowCarriesEveryFieldAndAttributesUnchanged() throws {
        let rows = try makeService().call("GET", "/rows", query: [("offset", "0"), ("limit", "2")]).json["rows"] as! [[String: Any]]
        #expect(rows[0]["id"] as? String == "main-courses")
        #expect(rows[0]["isGroup"] as? Bool == true)
        #expect(rows[0]["isExpanded"] as? Bool == true)
        #expect(rows[0]["childCount"] as? Int == 9)
        #expect(rows[1]["index"] as? Int == 1)
        #expect(rows[1]["title"] as? String == "宮保雞丁")
        #expect(rows[1]["depth"] as? Int == 1)
        #expect(rows[1]["isExpanded"] == nil && rows[1]["childCount"] == nil)
        #expect((rows[1]["attributes"] as? [String: Any])?["price"] as? Int == 38)
    }

    @Test func utf8TitlesPassThroughUnescaped() throws {
        let body = try makeService().call("GET", "/rows", query: [("limit", "2")]).body
        #expect(String(decoding: body, as: UTF8.self).contains("\"title\":\"宮保雞丁\""))
    }

    @Test func offsetPastTheEndGivesNoRows() throws {
        let json = try makeService().call("GET", "/rows", query: [("offset", "30")]).json
        #expect((json["rows"] as? [Any])?.isEmpty == true)
        #expect(json["count"] as? Int == 30)
    }

    @Test(arguments: [
        ("offset", "-1"), ("offset", "abc"), ("offset", "1.5"), ("offset", "1e2"), ("offset", "99999999999999999999999"),
        ("offset", ""), ("offset", nil), ("offset", "+3"), ("offset", " 3"), ("limit", "0"), ("limit", "501"),
        ("limit", "-5"), ("limit", "0x10"),
    ] as [(String, String?)])
    func badOffsetOrLimitIsInvalidParameter(name: String, value: String?) throws {
        let response = try makeService().call("GET", "/rows", query: [(name, value)])
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_parameter")
        #expect((response.json["error"] as? [String: Any])?["message"] as? String != nil)
    }

    @Test func duplicatedOffsetIsInvalidParameter() throws {
        let response = try makeService().call("GET", "/rows", query: [("offset", "1"), ("offset", "2")])
        #expect(response.errorCode == "invalid_parameter")
    }

    @Test func limitAboveTheConfiguredMaximumIsRefused() throws {
        let service = try makeService(maxLimit: 10)
        #expect(service.call("GET", "/rows", query: [("limit", "10")]).status == 200)
        #expect(service.call("GET", "/rows", query: [("limit", "11")]).errorCode == "invalid_parameter")
    }

    @Test func countReportsVersionCountAndLeafCount() throws {
        let json = try makeService().call("GET", "/count").json
        #expect(json.keys.sorted() == ["count", "leafCount", "version"])
        #expect(json["count"] as? Int == 30)
    }

    @Test func toggleWithoutSessionCreatesOne() throws {
        let service = try makeService()
        let response = service.call("POST", "/groups/main-courses/toggle")
        #expect(response.status == 200)
        let json = response.json
        let id = try #require(json["sessionId"] as? String)
        #expect(response.header("X-Session-Id") == id)
        #expect(json["isExpanded"] as? Bool == false)
        #expect(json["index"] as? Int == 0)
        #expect(json["count"] as? Int == 21)
        #expect(json["change"] as? [String: Int] == ["at": 1, "inserted": 0, "removed": 9])
        #expect(service.call("GET", "/count", session: id).json["count"] as? Int == 21)
        #expect(service.call("GET", "/count").json["count"] as? Int == 30)
    }

    @Test func hiddenGroupToggleHasNullIndexAndChange() throws {
        let service = try makeService()
        let id = service.call("POST", "/groups/drinks/toggle").json["sessionId"] as! String
        let json = service.call("POST", "/groups/beer/toggle", session: id).json
        #expect(json["index"] is NSNull)
        #expect(json["change"] is NSNull)
        #expect(json["isExpanded"] as? Bool == false)
    }

    @Test func putExpansionIsIdempotent() throws {
        let service = try makeService()
        let id = service.call("POST", "/sessions").json["sessionId"] as! String
        let first = service.call("PUT", "/groups/breakfast/expansion", session: id, body: #"{"isExpanded": false}"#).json
        let second = service.call("PUT", "/groups/breakfast/expansion", session: id, body: #"{"isExpanded": false}"#).json
        #expect(first["change"] as? [String: Int] == ["at": 11, "inserted": 0, "removed": 5])
        #expect(second["change"] as? [String: Int] == ["at": 11, "inserted": 0, "removed": 0])
        #expect(second["count"] as? Int == 25)
    }

    @Test(arguments: ["", "not json", "{}", #"{"isExpanded": 1}"#, #"{"isExpanded": "true"}"#, #"{"isExpanded": null}"#, "[true]",
                      String(repeating: "[", count: 10_000)])
    func badExpansionBodyIsInvalidBody(body: String) throws {
        let response = try makeService().call("PUT", "/groups/breakfast/expansion", body: body)
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_body")
    }

    @Test func toggleOfARowIsNotAGroup() throws {
        let response = try makeService().call("POST", "/groups/mapo-tofu/toggle")
        #expect(response.status == 409)
        #expect(response.errorCode == "not_a_group")
    }

    @Test(arguments: ["nope", "..", "%2e%2e", "a%00b"])
    func toggleOfAnUnknownIDIsUnknownGroup(id: String) throws {
        let response = try makeService().call("POST", "/groups/\(id)/toggle")
        #expect(response.status == 404)
        #expect(response.errorCode == "unknown_group")
    }

    @Test func failedWriteWithoutSessionCreatesNoSession() throws {
        let service = try makeService()
        _ = service.call("POST", "/groups/nope/toggle")
        #expect((service.store as! InMemorySessionStore).count == 0)
    }

    @Test(arguments: ["short", "AAAAAAAAAAAAAAAAAAAAA!", "AAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAB"])
    func malformedSessionIsInvalidSession(session: String) throws {
        let response = try makeService().call("GET", "/rows", session: session)
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_session")
    }

    @Test func wellFormedUnknownSessionIsUnknownSession() throws {
        let response = try makeService().call("GET", "/count", session: SessionID.random().text)
        #expect(response.status == 404)
        #expect(response.errorCode == "unknown_session")
    }

    @Test func createSessionAnswers201WithHeaderAndBody() throws {
        let response = try makeService().call("POST", "/sessions")
        #expect(response.status == 201)
        let id = try #require(response.json["sessionId"] as? String)
        #expect(response.header("X-Session-Id") == id)
        #expect(SessionID(id) != nil)
    }

    @Test func deletedSessionIsUnknownAfterwards() throws {
        let service = try makeService()
        let id = service.call("POST", "/sessions").json["sessionId"] as! String
        let deleted = service.call("DELETE", "/sessions/\(id)")
        #expect(deleted.status == 204)
        #expect(deleted.body.isEmpty)
        #expect(service.call("GET", "/rows", session: id).errorCode == "unknown_session")
        #expect(service.call("DELETE", "/sessions/\(id)").errorCode == "unknown_session")
    }

    @Test func deleteOfMalformedSessionIsInvalidSession() throws {
        #expect(try makeService().call("DELETE", "/sessions/xyz").errorCode == "invalid_session")
    }

    @Test func healthzIsOK() throws {
        let response = try makeService().call("GET", "/healthz")
        #expect(response.status == 200)
        #expect(response.json["status"] as? String == "ok")
    }

    @Test(arguments: ["/", "/nope", "/rows/extra", "/groups", "/groups/x", "/groups/x/open", "//rows", "/sessions/a/b"])
    func unknownPathIsNotFound(path: String) throws {
        let response = try makeService().call("GET", path)
        #expect(response.status == 404)
        #expect(response.errorCode == "not_found")
    }

    @Test(arguments: [("POST", "/rows", "GET, HEAD"), ("DELETE", "/count", "GET, HEAD"), ("GET", "/groups/beer/toggle", "POST"),
                      ("POST", "/groups/beer/expansion", "PUT"), ("GET", "/sessions", "POST"), ("PUT", "/sessions/x", "DELETE")])
    func knownPathWithOtherMethodIsMethodNotAllowedWithAllow(method: String, path: String, allow: String) throws {
        let response = try makeService().call(method, path)
        #expect(response.status == 405)
        #expect(response.errorCode == "method_not_allowed")
        #expect(response.header("Allow") == allow)
    }

    @Test func everyResponseIsJSONAndUncached() throws {
        let service = try makeService()
        for response in [service.call("GET", "/rows"), service.call("GET", "/nope"), service.call("POST", "/sessions")] {
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            #expect(response.header("Cache-Control") == "no-store")
        }
    }

    @Test func rejectionsRenderAsJSONErrors() throws {
        let service = try makeService()
        let tooLarge = service.reject(.payloadTooLarge(limit: 65536))
        #expect(tooLarge.status == 413)
        #expect(tooLarge.errorCode == "payload_too_large")
        #expect(service.reject(.conflictingContentLength).status == 400)
        #expect(service.reject(.contentLengthWithChunked).status == 400)
    }

    @Test func fullStoreAnswers429WithRetryAfter() throws {
        let service = try makeService(maxSessions: 1)
        #expect(service.call("POST", "/sessions").status == 201)
        let response = service.call("POST", "/sessions")
        #expect(response.status == 429)
        #expect(response.errorCode == "too_many_sessions")
        #expect(response.header("Retry-After") != nil)
    }

    @Test func pagesConcatenateToTheWholeTable() throws {
        let service = try makeService()
        let all = (service.call("GET", "/rows", query: [("limit", "500")]).json["rows"] as! [[String: Any]]).map { $0["id"] as! String }
        var paged: [String] = []
        for offset in stride(from: 0, to: 30, by: 7) {
            paged += (service.call("GET", "/rows", query: [("offset", String(offset)), ("limit", "7")]).json["rows"] as! [[String: Any]]).map { $0["id"] as! String }
        }
        #expect(paged == all)
    }
}
