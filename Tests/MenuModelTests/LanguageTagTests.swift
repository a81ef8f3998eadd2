import Foundation
import MenuModel
import NaiveReference
import Testing

/// The RFC 5646 shape check and RFC 4647 lookup that config loading and the service's
/// negotiation share.
@Suite struct LanguageTagTests {
    @Test(
        "well-formed tags",
        arguments: [
            "en", "EN", "zh-Hant", "zh-Hant-TW", "zh-TW", "de-CH-1996", "es-419", "sr-Latn-RS", "zh-yue-HK",
            "sgn-ase-abc-def",
            "en-US-x-twain", "x-whatever", "en-u-ca-u-nu", "null", "de-u-co-phonebk", "en-a-bbb-x-a-ccc",
            "hy-Latn-IT-arevela", "tlh", "abcdefgh"
        ])
    func aWellFormedTagIsAccepted(tag: String) {
        #expect(LanguageTag.isWellFormed(tag))
    }

    @Test(
        "malformed tags",
        arguments: [
            "", "e", "e-US", "en_US", "en-", "-en", "en--US", "zh-Hant-abc", "en-US-u", "en-a-b", "x", "x-",
            "abcdefghi", "中文", "en-US!", "en US", "i-klingon", "zh-a-b-c-d-e-f-g", "en-x-abcdefghi",
            String(repeating: "ab-", count: 30) + "ab"
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

    /// openapi.yaml's `lang` pattern, a regular expression of RFC 5646's grammar, and the hand
    /// check agree on random strings of tag-like characters (and on the lists above).
    @Test func theHandCheckIsTheGrammarOpenAPIStates() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let yaml = try String(contentsOf: root.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        let lang = try #require(yaml.range(of: "    Lang:\n"))
        let line = try #require(yaml[lang.upperBound...].split(separator: "\n").first { $0.contains("pattern: '") })
        let pattern = String(line.drop { $0 != "'" }.dropFirst().dropLast())
        let regex = try NSRegularExpression(pattern: pattern)
        func matches(_ text: String) -> Bool {
            text.utf8.count <= LanguageTag.maxLength
                && regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        var rng = SplitMix64(state: 5646)
        let alphabet = Array("aAbzxX019-")
        for _ in 0 ..< 20_000 {
            let length = Int(rng.next() % 24) + 1
            let text = String((0 ..< length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
            #expect(LanguageTag.isWellFormed(text) == matches(text), "\(text)")
        }
        for text in [
            "zh-Hant-TW", "sgn-ase-abc-def", "en-a-bbb-x-a-ccc", "x-whatever", "zh-Hant-abc", "en-US-u", "i-klingon",
            "abcdefghi"
        ] {
            #expect(LanguageTag.isWellFormed(text) == matches(text), "\(text)")
        }
    }
}
