import Foundation
import HTTPCore
import MenuAvailability
import MenuModel
import MenuService
import MenuServiceTestSupport
import MenuSessions
import Testing

/// `"whenUnavailable": "hide"` (issue 27 §2): while a node that hides is unavailable (its own
/// entry, a group's above it, or computed for a group whose rows all are), it is out of `/rows`,
/// `/count` and `/search` for every session, its groups' counts and its siblings' places follow,
/// and each session's feed tells the rows to splice as one reload entry; a node that shows stays,
/// marked. Sessions keep their expansion and selection by id; a write naming a hidden node says
/// why it is not there; the node comes back when its entry ends.
@Suite struct HiddenWhenUnavailableTests {
    static let config = #"""
        {"items": [
          {"id": "mains", "title": "Mains", "expanded": true, "items": [
            {"id": "fish", "title": "Dry-braised fish", "whenUnavailable": "hide"},
            {"id": "tofu", "title": "Mapo tofu"},
            {"id": "specials", "title": "Specials", "expanded": true, "whenUnavailable": "hide", "items": [
              {"id": "eel", "title": "Eel"}, {"id": "crab", "title": "Crab"}]}]},
          {"id": "drinks", "title": "Drinks", "items": [{"id": "tea", "title": "Tea"}]}
        ]}
        """#
    let now = Timestamp(milliseconds: 1_800_000_000_000)

    func service() throws -> MenuAPI {
        let menu = try Menu(jsonData: Data(Self.config.utf8))
        let clock = now
        return MenuAPI(store: InMemorySessionStore(menu: menu), maxLimit: 500, clock: { clock })
    }

    static func rows(_ service: MenuAPI, _ session: String) -> [[String: Any]] {
        service.call("GET", "/rows", query: [("limit", "500")], session: session).json["rows"] as? [[String: Any]] ?? []
    }

    static func ids(_ rows: [[String: Any]]) -> [String] { rows.compactMap { $0["id"] as? String } }

    static func row(_ id: String, in rows: [[String: Any]]) -> [String: Any] {
        rows.first { $0["id"] as? String == id } ?? [:]
    }

    @Test func aHiddenNodeLeavesRowsCountAndSearchAndItsGroupsCountsFollow() throws {
        let service = try service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        let version = service.call("GET", "/count", session: session).json["version"] as? String
        #expect(Self.ids(Self.rows(service, session)) == ["mains", "fish", "tofu", "specials", "eel", "crab", "drinks"])

        _ = try service.updateAvailability(
            [.init(id: "fish", Availability(state: .soldOut)), .init(id: "tofu", Availability(state: .soldOut))],
            now: now)
        let rows = Self.rows(service, session)
        #expect(Self.ids(rows) == ["mains", "tofu", "specials", "eel", "crab", "drinks"])
        let mains = Self.row("mains", in: rows)
        #expect(mains["childCount"] as? Int == 2 && mains["visibleDescendantCount"] as? Int == 4)
        #expect(mains["selectableCount"] as? Int == 2, "tofu is unavailable, eel and crab are left")
        let tofu = Self.row("tofu", in: rows)
        #expect(tofu["posInSet"] as? Int == 1 && tofu["setSize"] as? Int == 2)
        #expect((tofu["availability"] as? [String: Any])?["state"] as? String == "sold_out", "tofu shows, marked")
        let count = service.call("GET", "/count", session: session).json
        #expect(count["count"] as? Int == 6 && count["leafCount"] as? Int == 3)
        #expect(count["version"] as? String != version, "another listing: another version")
        let search = service.call("GET", "/search", query: [("q", "fish")], session: session).json
        #expect((search["matches"] as? [Any])?.isEmpty ?? (search["count"] as? Int == 0), "\(search)")
        #expect(service.call("GET", "/rows", query: [("q", "braised")], session: session).json["count"] as? Int == 0)
    }

    @Test func theFeedSplicesTheRowsOutAndBackIn() throws {
        let service = try service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        let before = Self.rows(service, session)
        _ = try service.updateAvailability([.init(id: "fish", Availability(state: .paused))], now: now)
        let feed = service.call("GET", "/changes", query: [("since", "0")], session: session).json
        let entries = try #require(feed["changes"] as? [[String: Any]])
        #expect(feed["revision"] as? Int == 1 && entries.count == 1, "one revision for the listing's change")
        let reload = try #require(entries.first?["reload"] as? [String: Any])
        let changes = try #require(reload["changes"] as? [[String: Int]])
        #expect(changes == [["at": 1, "inserted": 0, "removed": 1]])
        #expect((reload["reconfigured"] as? [Int])?.contains(0) == true, "mains' counts changed")
        #expect(Self.ids(Self.rows(service, session)) == Self.ids(before).filter { $0 != "fish" })

        _ = try service.updateAvailability([.init(id: "fish", Availability(state: .available))], now: now)
        let back = service.call("GET", "/changes", query: [("since", "1")], session: session).json
        let entry = try #require((back["changes"] as? [[String: Any]])?.first?["reload"] as? [String: Any])
        #expect(entry["changes"] as? [[String: Int]] == [["at": 1, "inserted": 1, "removed": 0]])
        #expect(Self.ids(Self.rows(service, session)) == Self.ids(before))
    }

    @Test func aGroupWhoseRowsAreAllUnavailableHidesAndNamingItSaysWhy() throws {
        let service = try service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        _ = try service.updateAvailability(
            [.init(id: "eel", Availability(state: .soldOut)), .init(id: "crab", Availability(state: .soldOut))],
            now: now)
        #expect(Self.ids(Self.rows(service, session)) == ["mains", "fish", "tofu", "drinks"])
        let toggle = service.call("POST", "/groups/specials/toggle", session: session)
        #expect(toggle.status == 404 && toggle.errorCode == "unknown_group")
        let message = (toggle.json["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("whenUnavailable is hide"), "\(message)")
        let node = service.call("GET", "/nodes/eel", session: session)
        #expect(node.status == 404 && node.errorCode == "unknown_node")
        #expect(service.call("POST", "/groups/nothing/toggle", session: session).json.description.contains("no group"))
    }

    @Test func sessionsKeepTheirStateByIdAndTheNodeComesBackWhenItsEntryEnds() throws {
        let service = try service()
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        #expect(service.call("POST", "/groups/drinks/toggle", session: session).status == 200)
        #expect(
            service.call("PUT", "/nodes/tofu/selection", session: session, body: #"{"selected": true}"#).status == 200)
        let later = now.adding(milliseconds: 60_000)
        _ = try service.updateAvailability(
            [.init(id: "specials", Availability(state: .paused, until: later))], now: now)
        var rows = Self.rows(service, session)
        #expect(Self.ids(rows) == ["mains", "fish", "tofu", "drinks", "tea"], "drinks stays open")
        #expect(Self.row("tofu", in: rows)["selected"] as? Bool == true)
        service.expireAvailability(now: later.adding(milliseconds: 1))
        rows = Self.rows(service, session)
        #expect(Self.ids(rows) == ["mains", "fish", "tofu", "specials", "eel", "crab", "drinks", "tea"])
        #expect(Self.row("specials", in: rows)["availability"] == nil)
    }
}
