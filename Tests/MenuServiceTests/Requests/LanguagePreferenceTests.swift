import MenuService
import Testing

/// `Accept-Language` as the service reads it (RFC 9110 §12.5.4) and the locale it chooses
/// (RFC 4647 §3.4 lookup): the pure parser under the contract tests.
@Suite struct LanguagePreferenceTests {
    static let locales = ["zh-hant", "zh-hans", "en"].map { Array($0.utf8) }

    static func choose(_ header: String...) -> Int? {
        LanguagePreference(values: header.map { Array($0.utf8) }).locale(among: locales)
    }

    @Test func rangesAreReadWithTheirQualitiesAndMalformedElementsAreDropped() {
        let parsed = LanguagePreference(values: [
            Array(" en-GB ; q=0.8 ,, fr;Q=1, de;q=1.0001, es;q=0.5;x=1, *;q=0 , zh_TW, ;q=1, \tit".utf8)
        ])
        #expect(parsed.ranges.map { String(decoding: $0.tag, as: UTF8.self) } == ["en-GB", "fr", "*", "it"])
        #expect(parsed.ranges.map(\.quality) == [800, 1000, 0, 1000])
    }

    @Test func theHighestQualityThatMatchesWinsAndTiesKeepHeaderOrder() {
        #expect(Self.choose("en;q=0.5, zh-Hans;q=0.9") == 1)
        #expect(Self.choose("en, zh-Hans") == 2)
        #expect(Self.choose("fr, de;q=0.9, en;q=0.1") == 2)
        #expect(Self.choose("en;q=0.001, zh-Hant;q=0") == 2)
    }

    @Test func lookupFallsBackAlongTheRange() {
        #expect(Self.choose("zh-Hant-TW") == 0)
        #expect(Self.choose("zh-Hans-CN-x-pinyin") == 1)
        #expect(Self.choose("zh") == nil)  // lookup shortens the range, never the tag
        #expect(Self.choose("fr-CA") == nil)
    }

    @Test func aStarTakesTheFirstLocaleNotRefused() {
        #expect(Self.choose("*") == 0)
        #expect(Self.choose("zh-Hant;q=0, *") == 1)
        #expect(Self.choose("zh;q=0, *;q=0.1") == 2)  // q=0 for zh refuses zh-Hant and zh-Hans
        #expect(Self.choose("en;q=0", "zh-Hant;q=0, zh-Hans;q=0") == nil)  // two lines are one list
    }

    @Test func aMalformedOrEmptyHeaderChoosesNothing() {
        #expect(Self.choose("") == nil)
        #expect(Self.choose(";;;,,,") == nil)
        #expect(Self.choose("en;q=2") == nil)
        #expect(Self.choose("\u{0}") == nil)
    }

    @Test func onlyTheFirstRangesAreKept() {
        let many = LanguagePreference(values: [Array(Array(repeating: "fr", count: 1000).joined(separator: ",").utf8)])
        #expect(many.ranges.count == LanguagePreference.maxRanges)
    }
}
