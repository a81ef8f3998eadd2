import Foundation
import Testing

@testable import MenuModel

/// Titles in several locales (docs/config.md "Localized titles"): a string or an object of BCP 47 tags,
/// the document's `defaultLocale` and `locales`, and the problems each wrong shape reports.
@Suite struct LocalizedTitleTests {
    static func menu(_ json: String) throws -> Menu { try Menu(jsonData: Data(json.utf8)) }

    @Test func eachLocaleHasItsTitlesAndAMissingOneFallsBackToTheDefault() throws {
        let menu = try Self.menu(
            #"""
            {"defaultLocale": "zh-Hant", "title": {"zh-Hant": "菜單", "en": "Menu"},
             "items": [{"id": "kung-pao", "title": {"en": "Kung Pao Chicken", "zh-Hant": "宮保雞丁", "zh-Hans": "宫保鸡丁"}},
                       {"id": "rice", "title": "米飯"}]}
            """#)
        #expect(menu.locales == ["zh-Hant", "en", "zh-Hans"])
        #expect(menu.defaultLocale == "zh-Hant")
        #expect(menu.localeIndices == 0 ..< 3)
        let kungPao = try #require(menu.node(withID: "kung-pao"))
        let rice = try #require(menu.node(withID: "rice"))
        #expect(menu.title(of: kungPao) == "宮保雞丁")
        #expect(menu.localeIndices.map { menu.title(of: kungPao, locale: $0) } == ["宮保雞丁", "Kung Pao Chicken", "宫保鸡丁"])
        #expect(menu.localeIndices.map { menu.title(of: rice, locale: $0) } == ["米飯", "米飯", "米飯"])
        #expect(menu.title == "菜單")
        #expect(menu.localeIndices.map { menu.title(locale: $0) } == ["菜單", "Menu", "菜單"])
    }

    @Test func listedLocalesFixTheOrderWithTheDefaultFirst() throws {
        let menu = try Self.menu(
            #"""
            {"items": [{"id": "a", "title": {"fr": "Un", "en": "One"}}], "locales": ["fr", "de", "EN"], "defaultLocale": "en"}
            """#)
        #expect(menu.locales == ["en", "fr", "de"])
        let a = try #require(menu.node(withID: "a"))
        #expect(menu.localeIndices.map { menu.title(of: a, locale: $0) } == ["One", "Un", "One"])
    }

    @Test func aMenuWithoutLocalesHasOneTitleTable() throws {
        let menu = try Self.menu(#"{"items": [{"id": "a", "title": "A"}]}"#)
        #expect(menu.locales.isEmpty && menu.defaultLocale == nil)
        #expect(menu.localeIndices == 0 ..< 1)
        #expect(menu.title(of: 1, locale: 0) == "A")
    }

    @Test func theVersionChangesWithATitleInAnyLocale() throws {
        let one = try Self.menu(#"{"defaultLocale": "en", "items": [{"id": "a", "title": {"en": "A", "de": "A"}}]}"#)
        let two = try Self.menu(#"{"defaultLocale": "en", "items": [{"id": "a", "title": {"en": "A", "de": "B"}}]}"#)
        #expect(one.version != two.version)
    }

    @Test func aTitleWithoutTheDefaultLocaleNamesTheNodeAndTheLocale() {
        let found = configProblems(
            #"{"defaultLocale": "zh-Hant", "items": [{"id": "g", "title": "G", "items": [{"id": "soup", "title": {"en": "Soup"}}]}]}"#
        )
        #expect(
            found == [
                ConfigProblem(
                    path: "items[0].items[0].title", kind: .missingDefaultLocaleTitle(defaultLocale: "zh-Hant"),
                    value: #"{"en": …}"#, nodeID: "soup")
            ])
        #expect(found.first?.description.contains(#"no text in the default locale "zh-Hant""#) == true)
    }

    @Test func aMalformedTagIsReportedAtItsKey() {
        let found = configProblems(
            #"{"defaultLocale": "en", "items": [{"id": "a", "title": {"en": "A", "en_US": "A"}}]}"#)
        #expect(
            found == [
                ConfigProblem(path: "items[0].title.en_US", kind: .malformedLocaleTag, value: #""en_US""#, nodeID: "a")
            ])
        #expect(
            configProblems(#"{"defaultLocale": "english!", "items": []}"#)
                == [ConfigProblem(path: "defaultLocale", kind: .malformedLocaleTag, value: #""english!""#)])
        #expect(
            configProblems(#"{"defaultLocale": "en", "locales": ["en", "e"], "items": []}"#)
                == [ConfigProblem(path: "locales[1]", kind: .malformedLocaleTag, value: #""e""#)])
    }

    @Test func aTagNotInLocalesIsReportedWhereItIsFirstUsed() {
        let found = configProblems(
            #"""
            {"defaultLocale": "en", "locales": ["en", "fr"], "items": [{"id": "a", "title": "A"}, {"id": "b", "title": {"en": "B", "de": "B"}}]}
            """#)
        #expect(
            found == [
                ConfigProblem(
                    path: "items[1].title.de", kind: .localeNotListed(locales: #"["en", "fr"]"#), value: #""de""#,
                    nodeID: "b")
            ])
    }

    @Test func localesMustIncludeTheDefault() {
        #expect(
            configProblems(#"{"defaultLocale": "en", "locales": ["fr"], "items": []}"#)
                == [
                    ConfigProblem(
                        path: "locales", kind: .defaultLocaleNotListed(defaultLocale: "en"), value: #"["fr"]"#)
                ])
    }

    @Test func titleObjectsNeedADefaultLocale() {
        #expect(
            configProblems(#"{"items": [{"id": "a", "title": {"en": "A"}}]}"#)
                == [
                    ConfigProblem(
                        path: "items[0].title", kind: .localizedTitleWithoutDefaultLocale, value: #"{"en": …}"#,
                        nodeID: "a")
                ])
    }

    @Test func anEmptyTitleInSomeLocaleOrAnEmptyObjectIsRefused() {
        #expect(
            configProblems(#"{"defaultLocale": "en", "items": [{"id": "a", "title": {"en": "A", "fr": " "}}]}"#)
                == [ConfigProblem(path: "items[0].title.fr", kind: .emptyTitle, value: #"" ""#, nodeID: "a")])
        #expect(
            configProblems(#"{"defaultLocale": "en", "items": [{"id": "a", "title": {}}]}"#)
                == [ConfigProblem(path: "items[0].title", kind: .emptyTitle, value: "{}", nodeID: "a")])
    }

    @Test func aTagGivenTwiceInOneTitleIsADuplicateWhateverItsCase() {
        #expect(
            configProblems(#"{"defaultLocale": "en", "items": [{"id": "a", "title": {"en": "A", "EN": "B"}}]}"#)
                == [ConfigProblem(path: "items[0].title.EN", kind: .duplicateKey, value: #""EN""#, nodeID: "a")])
    }

    @Test func aTitleOfTheWrongTypeSaysBothShapes() {
        #expect(
            configProblems(#"{"items": [{"id": "a", "title": 3}]}"#)
                == [
                    ConfigProblem(
                        path: "items[0].title",
                        kind: .wrongType(expected: "a string or an object of language tags to strings"),
                        value: "3", nodeID: "a")
                ])
    }
}
