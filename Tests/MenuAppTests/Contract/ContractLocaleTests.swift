// Localized titles (docs/api.md "Languages"), written once and run over both transports: the
// locale a read is answered in, its headers and its entity tags.

import Foundation
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import Testing

extension AppTests {
    @Suite("Contract: localized titles, Accept-Language and ?lang=")
    struct ContractLocaleTests {
        static func start(_ transport: ContractTransport) throws -> ContractServer {
            try transport.start { $0.configPath = LivePaths.localizedMenuConfig }
        }

        /// The titles of the first `limit` rows answered for `target` with `Accept-Language: language`.
        static func titles(
            _ client: any ContractClient, _ target: String, language: String? = nil, session: String? = nil
        ) async throws -> [String] {
            let response = try await client.send(
                "GET", target, session: session, headers: language.map { [("Accept-Language", $0)] } ?? [])
            #expect(response.status == 200, "\(target) Accept-Language: \(language ?? "-"): \(response)")
            return try response.decode(LiveRowsPage.self).rows.map(\.title)
        }

        @Test(arguments: ContractTransport.allCases)
        func oneSessionReadInTwoLocalesHasOneStructureTheirTitlesAndTwoTags(over transport: ContractTransport)
            async throws
        {
            let server = try Self.start(transport)
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            _ = try await client.toggle("drinks", session: session)
            let chinese = try await client.send(
                "GET", "/rows?limit=100", session: session, headers: [("Accept-Language", "zh-Hant")])
            let english = try await client.send(
                "GET", "/rows?limit=100", session: session, headers: [("Accept-Language", "en")])
            let (zhPage, enPage) = (try chinese.decode(LiveRowsPage.self), try english.decode(LiveRowsPage.self))
            #expect(zhPage.count == enPage.count && zhPage.revision == 1 && enPage.revision == 1)
            func structure(_ rows: [LiveRow]) -> [String] {
                rows.map { "\($0.index) \($0.id) \($0.depth) \($0.isExpanded.map(String.init) ?? "row")" }
            }
            #expect(structure(zhPage.rows) == structure(enPage.rows))
            #expect(zhPage.rows.first { $0.id == "kung-pao-chicken" }?.title == "宮保雞丁")
            #expect(enPage.rows.first { $0.id == "kung-pao-chicken" }?.title == "Kung Pao Chicken")
            #expect(zip(zhPage.rows, enPage.rows).allSatisfy { $0.title != $1.title })
            let version = zhPage.version
            #expect(chinese.header("ETag") == "\"\(version)-zh-Hant-1\"")
            #expect(english.header("ETag") == "\"\(version)-en-1\"")
            for (response, language) in [(chinese, "zh-Hant"), (english, "en")] {
                #expect(response.header("Content-Language") == language)
                #expect(response.header("Vary") == "X-Session-Id, Accept-Language")
            }
            // A tag matches in its own locale only; /count shares it.
            let revalidated = try await client.send(
                "GET", "/count", session: session,
                headers: [("Accept-Language", "en"), ("If-None-Match", english.header("ETag") ?? "")])
            // A 304 keeps Vary but no representation metadata (RFC 9110 §15.4.5).
            #expect(revalidated.status == 304 && revalidated.header("Vary") == "X-Session-Id, Accept-Language")
            #expect(revalidated.header("Content-Language") == nil)
            let otherLocale = try await client.send(
                "GET", "/count", session: session,
                headers: [("Accept-Language", "zh-Hant"), ("If-None-Match", english.header("ETag") ?? "")])
            #expect(otherLocale.status == 200)
        }

        @Test(arguments: ContractTransport.allCases)
        func theLocaleIsChosenByQualityThenLookupThenTheDefault(over transport: ContractTransport) async throws {
            let server = try Self.start(transport)
            defer { server.shutdown() }
            let client = server.client()
            let cases: [(header: String?, first: String)] = [
                (nil, "主菜"),
                ("en", "Main Courses"),
                ("zh-Hant-TW", "主菜"),
                ("ZH-hans-CN", "主菜"),  // the same characters in both scripts; the header says which
                ("fr, en;q=0.5, zh-Hans;q=0.9", "主菜"),
                ("zh-Hans;q=0.1, en;q=0.8", "Main Courses"),
                ("fr-CA, de", "主菜"),
                ("*", "主菜"),
                ("zh-Hant;q=0, *;q=0.5", "主菜"),
                ("en-GB;q=1.000, zh;q=0.999", "Main Courses"),
                ("en;q=2, ,,garbage!!, en;q=x", "主菜")
            ]
            // URLSession sends an Accept-Language of its own (the process's locale) when a request sets none.
            for (header, first) in cases where header != nil || transport == .inProcess {
                let title = try await Self.titles(client, "/rows?limit=2", language: header).first
                #expect(title == first, "Accept-Language: \(header ?? "-")")
            }
            let languages: [(header: String, contentLanguage: String)] = [
                ("zh-Hans-CN", "zh-Hans"), ("zh-Hant;q=0, *;q=0.5", "zh-Hans"), ("en;q=0, zh-Hant;q=0", "zh-Hant"),
                ("zh-TW", "zh-Hant")
            ]
            for (header, language) in languages {
                let response = try await client.send("GET", "/count", headers: [("Accept-Language", header)])
                #expect(response.header("Content-Language") == language, "Accept-Language: \(header)")
            }
        }

        @Test(arguments: ContractTransport.allCases)
        func langOverridesTheHeaderAndAMalformedOneIsRefused(over transport: ContractTransport) async throws {
            let server = try Self.start(transport)
            defer { server.shutdown() }
            let client = server.client()
            #expect(try await Self.titles(client, "/rows?limit=1&lang=en", language: "zh-Hant").first == "Main Courses")
            #expect(try await Self.titles(client, "/rows?limit=1&lang=zh-Hant-HK", language: "en").first == "主菜")
            #expect(try await Self.titles(client, "/rows?limit=1&lang=fr", language: "en").first == "主菜")  // lang decides: fr falls to the default
            let counted = try await client.get("/count?lang=zh-hans")
            #expect(counted.header("Content-Language") == "zh-Hans")
            for bad in ["en_US", "", "*", "%E4%B8%AD", "x"] {
                let refused = try await client.get("/rows?lang=\(bad)")
                #expect(refused.status == 400, "lang=\(bad): \(refused)")
                #expect(try refused.json()["error"]?["code"] == .string("invalid_parameter"))
            }
            #expect(try await client.get("/rows?lang=en&lang=zh").status == 400)
        }

        @Test(arguments: ContractTransport.allCases)
        func aWriteTakesTheTagOfItsStateInAnyLocale(over transport: ContractTransport) async throws {
            let server = try Self.start(transport)
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            let english = try #require(try await client.send("GET", "/count?lang=en", session: session).header("ETag"))
            let written = try await client.send(
                "POST", "/groups/drinks/toggle", session: session, headers: [("If-Match", english)])
            #expect(written.status == 200)
            let stale = try await client.send(
                "POST", "/groups/drinks/toggle", session: session, headers: [("If-Match", english)])
            #expect(stale.status == 412)
        }

        @Test(arguments: ContractTransport.allCases)
        func theOtherReadsCarryTheLocaleToo(over transport: ContractTransport) async throws {
            let server = try Self.start(transport)
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            let headers = [("Accept-Language", "en")]
            let node = try await client.send("GET", "/nodes/kung-pao-chicken", session: session, headers: headers)
            #expect(try node.json()["row"]?["title"] == .string("Kung Pao Chicken"))
            for target in ["/nodes/kung-pao-chicken", "/changes?since=0", "/session"] {
                let response = try await client.send("GET", target, session: session, headers: headers)
                #expect(response.status == 200, "\(target): \(response)")
                #expect(response.header("Content-Language") == "en", "\(target)")
                #expect(response.header("Vary")?.contains("Accept-Language") == true, "\(target)")
            }
        }
    }
}
