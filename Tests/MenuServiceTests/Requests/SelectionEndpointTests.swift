import Foundation
import HTTPCore
import MenuAvailability
import MenuModel
import MenuService
import MenuServiceTestSupport
import MenuSessions
import MenuTestSupport
import Testing

/// Selection through the API (issue 28 §1): a leaf, a group at any depth and the whole menu are
/// chosen whatever is expanded; rows carry the result, exact for groups never expanded; a write
/// is a revision with a feed entry and honours `If-Match`; a group's `maxSelect` refuses a write
/// that passes it; unavailable leaves cannot be chosen and are left out of a group's choice;
/// `GET /selection` reads it back with its violations, and `GET /session` carries it.
@Suite("Selection through the API")
struct SelectionEndpointTests {
    /// mains (expanded): fish, tofu, pork; sides (maxSelect 2, minSelect 1, collapsed): rice,
    /// noodles, greens (a group: spinach, choy); drinks (collapsed): tea.
    static let config = #"""
        {"items": [
          {"id": "mains", "title": "Mains", "expanded": true, "items": [
            {"id": "fish", "title": "Fish"}, {"id": "tofu", "title": "Tofu"}, {"id": "pork", "title": "Pork"}]},
          {"id": "side-dishes", "title": "Sides", "minSelect": 1, "maxSelect": 2, "items": [
            {"id": "rice", "title": "Rice"}, {"id": "noodles", "title": "Noodles"},
            {"id": "greens", "title": "Greens", "items": [{"id": "spinach", "title": "Spinach"}, {"id": "choy", "title": "Choy"}]}]},
          {"id": "drinks", "title": "Drinks", "items": [{"id": "tea", "title": "Tea"}]}
        ]}
        """#

    let menu = try! Menu(jsonData: Data(Self.config.utf8))
    let now = Timestamp(milliseconds: 1_800_000_000_000)

    func service() -> MenuAPI { MenuAPI(menu: menu, store: InMemorySessionStore(menu: menu), maxLimit: 500) }

    static func put(_ service: MenuAPI, _ path: String, _ body: String, session: String?, ifMatch: String? = nil)
        -> HTTPResponse
    {
        var headers: [(name: String, value: String)] = []
        if let session { headers.append(("x-session-id", session)) }
        if let ifMatch { headers.append(("if-match", ifMatch)) }
        return service.respond(
            to: HTTPRequest(method: "PUT", path: path, query: [], headers: headers, body: Array(body.utf8)))
    }

    /// Every row of the session's table by id: the selection fields it carries.
    static func rows(_ service: MenuAPI, _ session: String) -> [String: [String: Any]] {
        let rows = service.call("GET", "/rows", query: [("limit", "500")], session: session).json["rows"]
        var byID: [String: [String: Any]] = [:]
        for row in rows as? [[String: Any]] ?? [] { byID[row["id"] as! String] = row }
        return byID
    }

    @Test func aGroupChosenWhileCollapsedCountsExactlyAndItsLeavesShowItOnceOpened() throws {
        let service = service()
        let select = Self.put(service, "/nodes/greens/selection", #"{"selected":true}"#, session: nil)
        #expect(select.status == 200, "\(String(decoding: select.body, as: UTF8.self))")
        let session = try #require(select.header("X-Session-Id"))
        #expect(select.json["selectedCount"] as? Int == 2 && select.json["revision"] as? Int == 1)
        // Hidden (sides is collapsed): no rows of its own; its ancestors' counts changed.
        let reconfigured = try #require(select.json["reconfigured"] as? [String: Any])
        #expect(reconfigured["count"] as? Int == 0 && reconfigured["ancestors"] as? [String] == ["side-dishes"])
        var rows = Self.rows(service, session)
        #expect(rows["side-dishes"]?["selection"] as? String == "some")
        #expect(rows["side-dishes"]?["selectedCount"] as? Int == 2)
        #expect(rows["side-dishes"]?["selectableCount"] as? Int == 4)
        #expect(rows["mains"]?["selection"] as? String == "none")
        #expect(rows["fish"]?["selected"] as? Bool == false)

        #expect(service.call("POST", "/groups/side-dishes/toggle", session: session).status == 200)
        #expect(service.call("POST", "/groups/greens/toggle", session: session).status == 200)
        rows = Self.rows(service, session)
        #expect(rows["greens"]?["selection"] as? String == "all")
        #expect(rows["spinach"]?["selected"] as? Bool == true && rows["choy"]?["selected"] as? Bool == true)
        #expect(rows["rice"]?["selected"] as? Bool == false)

        let clear = Self.put(service, "/nodes/choy/selection", #"{"selected":false}"#, session: session)
        #expect(clear.status == 200)
        rows = Self.rows(service, session)
        #expect(rows["greens"]?["selection"] as? String == "some" && rows["greens"]?["selectedCount"] as? Int == 1)
        let choyRow = try #require(rows["choy"]?["index"] as? Int)
        let entry = try #require(clear.json["reconfigured"] as? [String: Any])
        #expect(entry["at"] as? Int == choyRow && entry["count"] as? Int == 1)
        #expect(entry["ancestors"] as? [String] == ["side-dishes", "greens"])
    }

    @Test func aSelectionIsARevisionInTheFeedAndHonoursIfMatch() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        let tag = try #require(service.call("GET", "/count", session: session).header("ETag"))
        let first = Self.put(service, "/nodes/tofu/selection", #"{"selected":true}"#, session: session, ifMatch: tag)
        #expect(first.status == 200 && first.json["revision"] as? Int == 1)
        // The same tag again: the session moved on.
        let stale = Self.put(service, "/nodes/pork/selection", #"{"selected":true}"#, session: session, ifMatch: tag)
        #expect(stale.status == 412)
        // Repeating a write changes nothing: no revision.
        let again = Self.put(service, "/nodes/tofu/selection", #"{"selected":true}"#, session: session)
        #expect(again.json["revision"] as? Int == 1)
        let feed = service.call("GET", "/changes", query: [("since", "0")], session: session)
        let entries = try #require(feed.json["changes"] as? [[String: Any]])
        #expect(entries.count == 1)
        let reconfigured = try #require(entries.first?["reconfigured"] as? [String: Any])
        #expect(reconfigured["at"] as? Int == 2 && reconfigured["count"] as? Int == 1)
        #expect(reconfigured["ancestors"] as? [String] == ["mains"])
        #expect(entries.first?["change"] == nil)
    }

    @Test func aWritePastAGroupsMaxSelectIs409NamingTheGroupAndChangesNothing() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        #expect(Self.put(service, "/nodes/rice/selection", #"{"selected":true}"#, session: session).status == 200)
        let refused = Self.put(service, "/nodes/side-dishes/selection", #"{"selected":true}"#, session: session)
        #expect(refused.status == 409)
        #expect(refused.errorCode == "selection_above_maximum")
        let error = try #require(refused.json["error"] as? [String: Any])
        #expect(error["group"] as? String == "side-dishes" && error["maxSelect"] as? Int == 2)
        #expect(error["selected"] as? Int == 4)
        #expect(
            error["message"] as? String
                == "group \"side-dishes\" allows at most 2 selected (its maxSelect) and this would select 4; nothing was changed: clear some of its choices first"
        )
        #expect(
            Self.put(service, "/selection", #"{"all":true}"#, session: session).errorCode == "selection_above_maximum")
        let read = service.call("GET", "/selection", session: session)
        #expect(read.json["revision"] as? Int == 1 && read.json["selected"] as? [String] == ["rice"])
        // Up to the rule is fine; clearing is always fine.
        #expect(Self.put(service, "/nodes/spinach/selection", #"{"selected":true}"#, session: session).status == 200)
        #expect(Self.put(service, "/nodes/choy/selection", #"{"selected":true}"#, session: session).status == 409)
        #expect(
            Self.put(service, "/nodes/side-dishes/selection", #"{"selected":false}"#, session: session).status == 200)
        // Below the minimum: listed, not refused.
        let violations = try #require(
            service.call("GET", "/selection", session: session).json["violations"] as? [[String: Any]])
        #expect(violations.count == 1)
        #expect(violations.first?["group"] as? String == "side-dishes" && violations.first?["minSelect"] as? Int == 1)
    }

    @Test func anUnavailableLeafCannotBeSelectedAndAGroupsSelectionLeavesItOut() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        #expect(Self.put(service, "/nodes/pork/selection", #"{"selected":true}"#, session: session).status == 200)
        _ = try service.updateAvailability(
            [.init(id: "fish", Availability(state: .soldOut)), .init(id: "pork", Availability(state: .paused))],
            now: now)
        let refused = Self.put(service, "/nodes/fish/selection", #"{"selected":true}"#, session: session)
        #expect(refused.status == 409 && refused.errorCode == "node_unavailable")
        #expect(
            (refused.json["error"] as? [String: Any])?["message"] as? String
                == "\"fish\" cannot be selected now: it is sold out; nothing was changed")
        let group = Self.put(service, "/nodes/mains/selection", #"{"selected":true}"#, session: session)
        #expect(group.status == 200)
        let rows = Self.rows(service, session)
        #expect(rows["fish"]?["selected"] as? Bool == false && rows["tofu"]?["selected"] as? Bool == true)
        #expect(rows["pork"]?["selected"] as? Bool == false, "a group's choice clears its unavailable leaves")
        #expect(rows["mains"]?["selectableCount"] as? Int == 1 && rows["mains"]?["selection"] as? String == "all")
        #expect(Self.put(service, "/nodes/pork/selection", #"{"selected":false}"#, session: session).status == 200)
        // Selected before it became unavailable: a violation.
        #expect(Self.put(service, "/selection", #"{"all":false}"#, session: session).status == 200)
        let all = Self.put(service, "/selection", #"{"all":true}"#, session: session)
        #expect(all.status == 409, "every leaf would pass the sides' maximum")
    }

    @Test func aLeafSelectedBeforeItBecameUnavailableIsAViolation() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        #expect(Self.put(service, "/nodes/tea/selection", #"{"selected":true}"#, session: session).status == 200)
        #expect(Self.put(service, "/nodes/rice/selection", #"{"selected":true}"#, session: session).status == 200)
        _ = try service.updateAvailability([.init(id: "drinks", Availability(state: .paused))], now: now)
        let read = service.call("GET", "/selection", session: session)
        let violations = try #require(read.json["violations"] as? [[String: Any]])
        #expect(violations.count == 1)
        #expect(violations.first?["id"] as? String == "drinks")
        #expect(violations.first?["unavailable"] as? String == "paused" && violations.first?["selected"] as? Int == 1)
        #expect(read.json["selectableCount"] as? Int == 7 && read.json["selectedCount"] as? Int == 2)
    }

    @Test func getSelectionPagesTheSelectedIdsInMenuOrderAndTheSessionCarriesTheCompactForm() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        #expect(Self.put(service, "/nodes/mains/selection", #"{"selected":true}"#, session: session).status == 200)
        #expect(Self.put(service, "/nodes/tofu/selection", #"{"selected":false}"#, session: session).status == 200)
        #expect(Self.put(service, "/nodes/tea/selection", #"{"selected":true}"#, session: session).status == 200)
        let page = service.call("GET", "/selection", query: [("offset", "1"), ("limit", "5")], session: session)
        #expect(page.json["selected"] as? [String] == ["pork", "tea"])
        let compact = try #require(page.json["selection"] as? [String: Any])
        #expect(compact["all"] as? Bool == false && compact["toggled"] as? [String] == ["mains", "tofu", "tea"])
        let tag = try #require(page.header("ETag"))
        let unchanged = service.respond(
            to: HTTPRequest(
                method: "GET", path: "/selection", query: [("offset", "1"), ("limit", "5")],
                headers: [("x-session-id", session), ("if-none-match", tag)]))
        #expect(unchanged.status == 304)

        let portable = service.call("GET", "/session", session: session).json
        #expect((portable["selection"] as? [String: Any])?["toggled"] as? [String] == ["mains", "tofu", "tea"])
        // A session made from that form selects the same leaves.
        let body = #"{"selection": {"all": false, "toggled": ["tea", "mains", "tofu"]}}"#
        let copy = try #require(service.call("POST", "/sessions", body: body).json["sessionId"] as? String)
        #expect(
            service.call("GET", "/selection", session: copy).json["selected"] as? [String] == ["fish", "pork", "tea"])
    }

    @Test func aFilteredTreeAndTheAncestorRowsCarryTheSelectionToo() throws {
        let service = service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        #expect(Self.put(service, "/nodes/greens/selection", #"{"selected":true}"#, session: session).status == 200)
        #expect(Self.put(service, "/nodes/choy/selection", #"{"selected":false}"#, session: session).status == 200)
        // "spinach" matches one leaf: the filtered tree shows it under its groups.
        let page = service.call(
            "GET", "/rows", query: [("q", "spinach"), ("limit", "10"), ("offset", "2"), ("ancestors", "true")],
            session: session)
        #expect(page.status == 200)
        let rows = try #require(page.json["rows"] as? [[String: Any]])
        #expect(rows.map { $0["id"] as? String } == ["spinach"])
        #expect(rows.first?["selected"] as? Bool == true)
        let ancestors = try #require(page.json["ancestors"] as? [[String: Any]])
        #expect(ancestors.map { $0["id"] as? String } == ["side-dishes", "greens"])
        #expect(ancestors.map { $0["selection"] as? String } == ["some", "some"])
        #expect(ancestors.map { $0["selectedCount"] as? Int } == [1, 1])
        #expect(ancestors.map { $0["selectableCount"] as? Int } == [4, 2])
    }

    @Test(arguments: [
        (#"{"selected": "yes"}"#, #""selected" must be true or false; send {"selected": true} or {"selected": false}"#),
        ("", #"the body must be JSON like {"selected": true} or {"selected": false}; it is empty"#),
        (
            #"{"selected": true, "selected": false}"#,
            "the body has the key \"selected\" more than once in one object (parsers disagree on which one counts); send each key once"
        ),
        (#"{}"#, #"the body must have "selected"; send {"selected": true} or {"selected": false}"#)
    ])
    func aBadBodyIs400NamingWhatToSend(body: String, message: String) {
        let response = Self.put(service(), "/nodes/tofu/selection", body, session: nil)
        #expect(response.status == 400 && response.errorCode == "invalid_body")
        #expect((response.json["error"] as? [String: Any])?["message"] as? String == message)
    }
}
