// GET /search on a menu with zh-Hant, zh-Hans and en titles (Tests/Fixtures/search-locales-menu.json):
// a query in either Chinese script or in English finds the node, and titles come in the
// negotiated locale, over both transports.

import Foundation
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import Testing

extension AppTests {
    @Suite("Contract: search across locales, in-process and over real HTTP")
    struct ContractSearchLocaleTests {
        static let fixture = LivePaths.packageRoot.appendingPathComponent("Tests/Fixtures/search-locales-menu.json")
            .path

        func search(_ client: any ContractClient, _ query: String, headers: [(String, String)] = []) async throws
            -> ContractSearchTests.Results
        {
            let response = try await client.send("GET", "/search?" + query, headers: headers)
            #expect(response.status == 200, "\(response)")
            return try response.decode(ContractSearchTests.Results.self)
        }

        @Test(arguments: ContractTransport.allCases)
        func traditionalSimplifiedAndEnglishQueriesFindTheSameNodes(over transport: ContractTransport) async throws {
            let server = try transport.start { $0.configPath = Self.fixture }
            defer { server.shutdown() }
            let client = server.client()
            for query in ["q=%E9%BA%B5", "q=%E9%9D%A2", "q=NOODLES"] {  // 麵, 面, NOODLES
                #expect(
                    try await search(client, query).matches.map(\.id) == ["noodles", "dandan", "beef-noodles"],
                    "\(query)")
            }
            #expect(try await search(client, "q=%E9%BE%99%E4%BA%95").matches.map(\.id) == ["longjing"])  // 龙井, simplified only
        }

        @Test(arguments: ContractTransport.allCases)
        func titlesAndPathsComeInTheNegotiatedLocale(over transport: ContractTransport) async throws {
            let server = try transport.start { $0.configPath = Self.fixture }
            defer { server.shutdown() }
            let client = server.client()
            let hans = try await search(client, "q=dan%20dan&lang=zh-Hans")
            #expect(hans.matches.map(\.title) == ["担担面"] && hans.matches.first?.path.map(\.title) == ["面食"])
            let english = try await search(client, "q=%E6%8B%85", headers: [("Accept-Language", "en")])  // 担
            #expect(english.matches.map(\.title) == ["Dan Dan Noodles"])
            let french = try await search(client, "q=longjing", headers: [("Accept-Language", "fr")])
            #expect(french.matches.first?.path.map(\.title) == ["茶"])  // no French: the default, zh-Hant
            let page = try await client.get("/rows?q=longjing&lang=en")
            #expect(page.header("Content-Language") == "en")
            #expect(try page.decode(ContractSearchTests.FilteredPage.self).rows.map(\.title) == ["Tea", "Longjing Tea"])
        }
    }
}
