// GET /menu (docs/api.md): the menu's own title, languages, version, counts and attribute
// types, over both transports, in each of its locales, revalidated by its tag.

import Foundation
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import Testing

extension AppTests {
    @Suite("Contract: GET /menu, the menu's title, locales, counts and attributes")
    struct ContractMenuSummaryTests {
        struct Summary: Decodable, Equatable {
            struct Counts: Decodable, Equatable {
                var nodes: Int
                var groups: Int
                var leaves: Int
                var defaultRows: Int
            }
            struct Attribute: Decodable, Equatable {
                var name: String
                var types: [String]
            }
            var version: String
            var title: String?
            var locale: String?
            var defaultLocale: String?
            var locales: [String]
            var timeZone: String?
            var counts: Counts
            var attributes: [Attribute]
        }

        @Test(arguments: ContractTransport.allCases)
        func theMenuSaysWhatItIsInTheReadersLanguageAndRevalidatesByItsTag(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start { $0.configPath = LivePaths.localizedMenuConfig }
            defer { server.shutdown() }
            let client = server.client()
            let english = try await client.send("GET", "/menu", headers: [("Accept-Language", "en-GB, zh;q=0.5")])
            #expect(english.status == 200 && english.header("Content-Language") == "en", "\(english)")
            #expect(english.header("Cache-Control") == "no-cache")
            let summary = try english.decode(Summary.self)
            let version = try await client.get("/count").decode(LiveCount.self).version
            #expect(summary.version == version && summary.locale == "en" && summary.defaultLocale == "zh-Hant")
            #expect(summary.title == "Sichuan Restaurant" && summary.locales == ["zh-Hant", "zh-Hans", "en"])
            #expect(summary.counts == .init(nodes: 30, groups: 6, leaves: 24, defaultRows: 30))
            #expect(summary.timeZone == nil)
            #expect(summary.attributes.map(\.name) == summary.attributes.map(\.name).sorted())
            #expect(summary.attributes.first { $0.name == "price" }?.types == ["number"])
            #expect(summary.attributes.first { $0.name == "vegetarian" }?.types == ["boolean"])
            // ?lang= decides over Accept-Language; the default locale when nothing matches.
            let simplified = try await client.get("/menu?lang=zh-Hans").decode(Summary.self)
            #expect(simplified.title == "川菜馆" && simplified.locale == "zh-Hans")
            let fallback = try await client.send("GET", "/menu", headers: [("Accept-Language", "fr")])
            #expect(
                try fallback.decode(Summary.self).title == "川菜館" && fallback.header("Content-Language") == "zh-Hant")
            // Its tag names the locale: a 304 in it, a full answer in another.
            let tag = try #require(english.header("ETag"))
            let again = try await client.send(
                "GET", "/menu", headers: [("Accept-Language", "en"), ("If-None-Match", tag)])
            #expect(again.status == 304 && again.body.isEmpty && again.header("Content-Language") == nil)
            let other = try await client.send("GET", "/menu?lang=zh-Hans", headers: [("If-None-Match", tag)])
            #expect(other.status == 200)
            for bad in ["/menu?lang=e_n", "/menu?limit=1", "/menu?lang=en&lang=en"] {
                let response = try await client.get(bad)
                #expect(response.status == 400, "\(bad): \(response)")
                #expect(try response.decode(LiveErrorBody.self).error.code == "invalid_parameter")
            }
        }
    }
}
