import Foundation

/// The language a client asks for, from its command line or its POSIX locale environment.
extension MenuClientConfiguration {
    /// The BCP 47 tag of the POSIX locale in `environment` (`LC_ALL`, then `LC_MESSAGES`, then
    /// `LANG`, the first set and not empty): `de_CH@euro` is `de-CH`; Chinese gets the script its
    /// region writes (CLDR's likely subtags), since lookup never adds one: `zh_TW.UTF-8` is
    /// `zh-Hant-TW`, `zh_CN` `zh-Hans-CN`. nil for `C`, `POSIX` or a value that gives no tag of
    /// letters and digits. O(length).
    public static func language(fromEnvironment environment: [String: String]) -> String? {
        guard
            let value = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap({ environment[$0] }).first(where: {
                !$0.isEmpty
            })
        else { return nil }
        let name = value.prefix { $0 != "." && $0 != "@" }
        guard name != "C", name != "POSIX" else { return nil }
        let tag = name.replacingOccurrences(of: "_", with: "-")
        let subtags = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = subtags.first, (2 ... 8).contains(first.count),
            first.allSatisfy({ $0.isASCII && $0.isLetter }),
            subtags.allSatisfy({
                (1 ... 8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            })
        else { return nil }
        if subtags.count == 2, subtags[0] == "zh", let script = Self.chineseScripts[String(subtags[1])] {
            return "zh-\(script)-\(subtags[1])"
        }
        return tag
    }

    /// The script Chinese is written in, by region.
    private static let chineseScripts = [
        "TW": "Hant", "HK": "Hant", "MO": "Hant", "CN": "Hans", "SG": "Hans", "MY": "Hans"
    ]
}
