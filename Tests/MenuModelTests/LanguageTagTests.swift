import Testing
import MenuModel

/// The RFC 5646 shape check and RFC 4647 lookup that config loading and the service's
/// negotiation share.
@Suite struct LanguageTagTests {
    @Test("well-formed tags", arguments: [
        "en", "EN", "zh-Hant", "zh-Hant-TW", "zh-TW", "de-CH-1996", "es-419", "sr-Latn-RS", "zh-yue-HK", "sgn-ase-abc-def",
        "en-US-x-twain", "x-whatever", "de-u-co-phonebk", "en-a-bbb-x-a-ccc", "hy-Latn-IT-arevela", "tlh", "abcdefgh",
    ])
    func aWellFormedTagIsAccepted(tag: String) {
        #expect(LanguageTag.isWellFormed(tag))
    }

    @Test("malformed tags", arguments: [
        "", "e", "e-US", "en_US", "en-", "-en", "en--US", "zh-Hant-abc", "en-US-u", "en-a-b", "en-u-ca-u-nu", "x", "x-",
        "abcdefghi", "中文", "en-US!", "en US", "i-klingon", "zh-a-b-c-d-e-f-g", "en-x-abcdefghi",
        String(repeating: "ab-", count: 30) + "ab",
    ])
    func aMalformedTagIsRefused(tag: String) {
        #expect(!LanguageTag.isWellFormed(tag))
    }

    @Test func lookupFallsBackAlongTheTagSkippingSingletons() {
        let tags = ["zh-hant", "zh", "en"].map { Array($0.utf8) }
        func lookup(_ range: String) -> Int? {
            var range = range
            return range.withUTF8 { LanguageTag.lookup($0, in: tags) }
        }
        #expect(lookup("zh-Hant-TW") == 0)
        #expect(lookup("ZH-HANT") == 0)
        #expect(lookup("zh-Hans-CN") == 1)
        #expect(lookup("zh-Hant-x-private") == 0)
        #expect(lookup("en-a-bbb-x-a-ccc") == 2)
        #expect(lookup("fr-CA") == nil)
        #expect(lookup("z") == nil)
        #expect(lookup("") == nil)
    }

    @Test func lowercasedFormIsWhatLookupCompares() {
        #expect(LanguageTag.lowercased("zh-Hant-TW") == Array("zh-hant-tw".utf8))
    }
}
