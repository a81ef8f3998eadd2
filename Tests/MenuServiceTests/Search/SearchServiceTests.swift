import Foundation
import HTTPCore
import MenuModel
import MenuServiceTestSupport
import MenuTestSupport
import NaiveReference
import Testing

@testable import MenuService

/// The service's search state: one cache of filtered views for every session of a menu, a fresh
/// index and cache for a reloaded menu, and searching never changing a session.
@Suite struct SearchServiceTests {
    @Test func everySessionSharesOneCachedViewOfAQuery() throws {
        let service = try makeService()
        let sessions = (0 ..< 3).map { _ in service.call("POST", "/sessions").header("X-Session-Id")! }
        for session in sessions {
            #expect(service.call("GET", "/rows", query: [("q", "豆腐")], session: session).status == 200)
            #expect(service.call("GET", "/search", query: [("q", "豆腐")], session: session).status == 200)
        }
        #expect(service.current.searchCache.usage.entries == 1)
        #expect(service.call("GET", "/count", query: [("q", "豆")]).status == 200)
        #expect(service.current.searchCache.usage.entries == 2)
    }

    @Test func aReloadedMenuHasItsOwnIndexAndAnEmptyCache() throws {
        let service = try makeService()
        #expect(service.call("GET", "/search", query: [("q", "豆腐")]).json["total"] as? Int ?? 0 >= 2)
        let before = service.current
        let edited = try Menu(jsonData: menuJSON([.group("g", "Group", [.row("t", "Tofu soup")])]))
        service.install(edited)
        #expect(service.current !== before && service.current.searchCache.usage.entries == 0)
        #expect(service.call("GET", "/search", query: [("q", "tofu")]).json["total"] as? Int == 1)
        #expect(service.call("GET", "/search", query: [("q", "豆腐")]).json["total"] as? Int == 0)
        #expect(before.searchCache.usage.entries == 1)  // the old menu's cache goes with it
    }

    @Test func searchingLeavesTheSessionsRevisionAndRowsAlone() throws {
        let service = try makeService()
        let session = service.call("POST", "/sessions").header("X-Session-Id")!
        #expect(service.call("POST", "/groups/drinks/toggle", session: session).status == 200)
        let before = service.call("GET", "/rows", session: session)
        for query in [[("q", "beer")], [("filter", "spicy:2")], [("q", "a"), ("filter", "vegetarian:true")]]
            as [[(String, String?)]]
        {
            #expect(service.call("GET", "/search", query: query, session: session).status == 200)
            #expect(service.call("GET", "/rows", query: query, session: session).status == 200)
        }
        let after = service.call("GET", "/rows", session: session)
        #expect(after.body == before.body && after.header("ETag") == before.header("ETag"))
    }
}
