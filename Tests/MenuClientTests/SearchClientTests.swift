// MenuSession.search against the real server (in process): each match is the node the server
// has (title, kind, enclosing groups), its index the row it has in this session's table, and
// what a person types (spaces, `+`, `&`, CJK) reaches the server as typed.

import Foundation
import MenuClient
import MenuTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(10))) struct SearchClientTests {
    /// Two groups of dishes, one collapsed, with a searchable `en` attribute and a nested group.
    static let menu = #"""
        {"title":"search","searchable":["en"],"items":[
          {"id":"mains","title":"主菜","attributes":{"en":"Mains"},"items":[
            {"id":"mapo","title":"麻婆豆腐","attributes":{"en":"Mapo Tofu"}},
            {"id":"home-tofu","title":"家常豆腐","attributes":{"en":"Home-Style Tofu"}},
            {"id":"pork","title":"回鍋肉","attributes":{"en":"Twice-Cooked Pork"}}]},
          {"id":"drinks","title":"酒水","expanded":false,"attributes":{"en":"Drinks"},"items":[
            {"id":"beer","title":"啤酒","expanded":false,"attributes":{"en":"Beer"},"items":[
              {"id":"tsingtao","title":"青島啤酒","attributes":{"en":"Tsingtao"}},
              {"id":"plus","title":"C++ & Co 豆腐","attributes":{"en":"Plus"}}]}]}]}
        """#

    @Test func matchesAreTheServersNodesAtTheRowsOfTheSessionsTable() async throws {
        let server = try ClientTestServer(config: Self.menu)
        defer { server.shutdown() }
        let session = MenuSession(configuration: server.configuration)
        let table = try await MenuTable(session: session)

        let page = try await session.search("豆腐")
        #expect(page.query == "豆腐")
        #expect(page.total == 3 && page.matches.map(\.id) == ["mapo", "home-tofu", "plus"])
        #expect(page.version == table.version && page.revision == table.revision)
        let sessionID = try #require(await session.id)
        let fresh = try await server.freshTable(sessionID: sessionID)
        for match in page.matches {
            #expect(match.title.contains("豆腐") && !match.isGroup)
            if let index = match.index {
                #expect(fresh.rows[index].id == match.id && fresh.rows[index].title == match.title)
            } else {
                #expect(!fresh.rows.contains { $0.id == match.id })  // hidden: a collapsed group encloses it
            }
        }
        let hidden = try #require(page.matches.last)
        #expect(hidden.index == nil)
        #expect(hidden.path == [.init(id: "drinks", title: "酒水"), .init(id: "beer", title: "啤酒")])
        #expect(hidden.pathText() == "酒水 › 啤酒 › C++ & Co 豆腐")

        // Revealed, the same search finds it at the row the reveal answered, in the new revision.
        let revealed = try await table.reveal(hidden.id)
        let again = try await table.search("豆腐")
        #expect(again.revision == table.revision && again.matches.last?.index == revealed.index)
        #expect(revealed.index != nil)
    }

    @Test func theQueryArrivesAsTypedAndFiltersAndPagesAreSent() async throws {
        let server = try ClientTestServer(config: Self.menu)
        defer { server.shutdown() }
        let session = MenuSession(configuration: server.configuration)

        // `+` is a space in a query string and `&` ends a parameter: both must be sent encoded.
        let typed = try await session.search("C++ & Co")
        #expect(typed.query == "C++ & Co" && typed.matches.map(\.id) == ["plus"])
        let searchable = try await session.search("tofu")  // the `en` attribute, case aside
        #expect(searchable.matches.map(\.id) == ["mapo", "home-tofu"])
        let second = try await session.search("豆腐", offset: 1, limit: 1)
        #expect(
            second.offset == 1 && second.limit == 1 && second.total == 3 && second.matches.map(\.id) == ["home-tofu"])
        let filtered = try await session.search("豆腐", filters: ["en": "Mapo Tofu"])
        #expect(filtered.matches.map(\.id) == ["mapo"])
        let byFilterAlone = try await session.search("", filters: ["en": "Beer"])
        #expect(
            byFilterAlone.query == nil && byFilterAlone.matches.map(\.id) == ["beer"]
                && byFilterAlone.matches[0].isGroup)

        await #expect(throws: MenuClientError.self) { try await session.search("") }  // neither text nor filter
        await #expect(throws: MenuClientError.self) { try await session.search(String(repeating: "x", count: 201)) }
        do {
            _ = try await session.search("豆腐", filters: ["colour": "red"])
            Issue.record("an unknown filter attribute was accepted")
        } catch {
            #expect(error.code == "invalid_filter" && error.description.contains("colour"))
        }
    }

    @Test func aSearchAnswerDecodesAndEncodesBackToTheServersExactJSON() async throws {
        let server = try ClientTestServer(config: Self.menu)
        defer { server.shutdown() }
        for target in ["/search?q=%E8%B1%86%E8%85%90", "/search?filter=en:Beer", "/search?q=zzz"] {
            let (body, _) = try await URLSession.shared.data(
                from: URL(string: "http://127.0.0.1:\(server.port)\(target)")!)
            let decoded = try JSONDecoder().decode(MenuSearchPage.self, from: body)
            let sent = try JSONDecoder().decode(LiveJSON.self, from: body)
            let read = try JSONDecoder().decode(LiveJSON.self, from: JSONEncoder().encode(decoded))
            #expect(
                read == sent,
                "\(target): the server sent \(String(decoding: body, as: UTF8.self)), the client reads \(read)")
        }
    }
}
