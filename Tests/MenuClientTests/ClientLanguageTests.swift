import Foundation
import MenuClient
import MenuTestSupport
import Testing

/// The client's language: from the POSIX locale environment, and sent as `Accept-Language` so a
/// server with locales answers in it.
@Suite struct ClientLanguageTests {
    @Test func thePOSIXLocaleBecomesALanguageTag() {
        #expect(MenuClientConfiguration.language(fromEnvironment: ["LANG": "zh_TW.UTF-8"]) == "zh-Hant-TW")
        #expect(MenuClientConfiguration.language(fromEnvironment: ["LANG": "zh_CN.UTF-8"]) == "zh-Hans-CN")
        #expect(MenuClientConfiguration.language(fromEnvironment: ["LANG": "zh_Hant_TW"]) == "zh-Hant-TW")
        #expect(MenuClientConfiguration.language(fromEnvironment: ["LANG": "de_CH@euro"]) == "de-CH")
        #expect(
            MenuClientConfiguration.language(fromEnvironment: ["LANG": "en_US.UTF-8", "LC_ALL": "fr_FR.UTF-8"])
                == "fr-FR")
        #expect(
            MenuClientConfiguration.language(fromEnvironment: ["LC_ALL": "", "LC_MESSAGES": "ja_JP", "LANG": "en"])
                == "ja-JP")
        #expect(MenuClientConfiguration.language(fromEnvironment: ["LANG": "C.UTF-8"]) == nil)
        #expect(MenuClientConfiguration.language(fromEnvironment: ["LANG": "POSIX"]) == nil)
        #expect(MenuClientConfiguration.language(fromEnvironment: ["LANG": "../etc"]) == nil)
        #expect(MenuClientConfiguration.language(fromEnvironment: [:]) == nil)
    }
}

@Suite struct ClientLanguageLiveTests {
    static let config = #"""
        {"defaultLocale": "zh-Hant", "items": [{"id": "mains", "title": {"zh-Hant": "主菜", "en": "Main Courses"}, "expanded": true,
          "items": [{"id": "kung-pao", "title": {"zh-Hant": "宮保雞丁", "zh-Hans": "宫保鸡丁", "en": "Kung Pao Chicken"}}]}]}
        """#

    @Test(.timeLimit(.minutes(10)))
    func aTableReadsTheTitlesInItsLanguage() async throws {
        let server = try ClientTestServer(config: Self.config)
        defer { server.shutdown() }
        for (language, titles) in [
            ("en", ["Main Courses", "Kung Pao Chicken"]), ("zh-Hans-CN", ["主菜", "宫保鸡丁"]),
            ("zh-Hant-TW, en;q=0.5", ["主菜", "宮保雞丁"]), (nil, ["主菜", "宮保雞丁"])
        ] {
            let table = try await MenuTable(
                session: MenuSession(configuration: server.configuration, language: language))
            let rows = try await table.rows(in: 0 ..< 2)
            #expect(rows.map(\.title) == titles, "language \(language ?? "none: the default locale")")
        }
    }
}
