// A MenuTable on a menu with locales: its conditional requests carry the tag of its own locale
// (`"<version>-<locale>-<revision>"`), so writes apply at once and a revalidation is a 304.

import Foundation
import MenuClient
import MenuTestSupport
import Testing

@testable import MenuClient

@Suite(.timeLimit(.minutes(10))) struct LocalizedTableTests {
    static let config = #"""
        {"defaultLocale": "zh-Hant", "locales": ["zh-Hant", "en"], "title": {"zh-Hant": "川菜館", "en": "Sichuan"},
         "items": [
          {"id": "mains", "title": {"zh-Hant": "主菜", "en": "Main Courses"}, "items": [
            {"id": "mapo", "title": {"zh-Hant": "麻婆豆腐", "en": "Mapo Tofu"}}]},
          {"id": "drinks", "title": {"zh-Hant": "酒水", "en": "Drinks"}, "expanded": false, "items": [
            {"id": "beer", "title": {"zh-Hant": "啤酒", "en": "Beer"}}]}]}
        """#

    @Test(arguments: ["en", nil])
    func writesAndRevalidationsCarryTheTagOfTheTablesLocale(language: String?) async throws {
        let server = try ClientTestServer(config: Self.config)
        defer { server.shutdown() }
        let session = MenuSession(configuration: server.configuration, language: language)
        let table = try await MenuTable(session: session)
        #expect(await session.contentLanguage == (language ?? "zh-Hant"))

        // Each write goes once: a tag without the locale would be refused (412) every time.
        let toggled = try await table.toggle("mains")  // collapsed by default: opened
        #expect(toggled.changes.count == 1 && table.revision == 1)
        let revealed = try await table.reveal("beer")
        #expect(revealed.index == 3 && table.revision == 2)
        #expect(
            try await table.rows(in: 0 ..< 4).map(\.title)
                == (language == "en"
                    ? ["Main Courses", "Mapo Tofu", "Drinks", "Beer"] : ["主菜", "麻婆豆腐", "酒水", "啤酒"]))
        #expect(try await table.sync().isEmpty && table.revision == 2)  // revalidated in its locale: nothing moved
        #expect(MenuHTTP.entityTag(version: "v 1", locale: "zh-Hant", revision: 3) == #""v%201-zh-Hant-3""#)
    }

    @Test(arguments: ["en", nil])
    func theSummaryNamesTheMenuInTheSessionsLanguageAndWhereRowsSit(language: String?) async throws {
        let server = try ClientTestServer(config: Self.config)
        defer { server.shutdown() }
        let session = MenuSession(configuration: server.configuration, language: language)
        let summary = try await session.summary()
        #expect(summary.title == (language == "en" ? "Sichuan" : "川菜館"))
        #expect(summary.locale == (language ?? "zh-Hant") && summary.locales == ["zh-Hant", "en"])
        #expect(summary.counts == MenuSummary.Counts(nodes: 4, groups: 2, leaves: 2, defaultRows: 2))
        #expect(summary.attributes.isEmpty && summary.timeZone == nil)
        #expect(await session.id == nil, "the summary makes no session")
        // Rows say where they sit, for a screen reader.
        let table = try await MenuTable(session: session)
        _ = try await table.toggle("mains")
        let rows = try await table.rows(in: 0 ..< table.count)
        #expect(rows.map(\.id) == ["mains", "mapo", "drinks"])
        #expect(rows.map(\.level) == [1, 2, 1] && rows.map(\.posInSet) == [1, 1, 2] && rows.map(\.setSize) == [2, 1, 2])
        #expect(summary.version == table.version)
    }
}
