// The `language` fuzz target: the input's lines as Accept-Language lines, its first line also as
// a language tag and as `?lang=`. What a parse keeps must be well-formed and the locale chosen
// one a range names by lookup; reads through a service on a menu with locales must get a
// well-formed answer (never a 5xx) in one of its locales.

import Foundation
import HTTPCore
import MenuModel
import MenuService
import MenuSessions

extension FuzzTarget {
    /// A menu in three locales, built once per process.
    static let localizedService: MenuAPI = {
        let json = Data(
            #"""
            {"defaultLocale":"zh-Hant","locales":["zh-Hant","zh-Hans","en","en-GB-x-a"],
             "items":[{"id":"g","title":{"zh-Hant":"主菜","zh-Hans":"主菜","en":"Mains"},"expanded":true,"items":[{"id":"r","title":{"en":"R","zh-Hant":"宮"}}]}]}
            """#.utf8)
        let menu = try! Menu(jsonData: json)
        return MenuAPI(menu: menu, store: InMemorySessionStore(menu: menu, maxSessions: 64))
    }()

    static func checkLanguage(_ bytes: [UInt8]) -> String? {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        let first = lines.first ?? []
        // A well-formed tag stays well-formed in any case.
        let wellFormed = first.withUnsafeBufferPointer(LanguageTag.isWellFormed)
        let upper = first.map { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") ? $0 - 0x20 : $0 }
        guard upper.withUnsafeBufferPointer(LanguageTag.isWellFormed) == wellFormed else {
            return "the tag's case changed whether it is well-formed"
        }

        let preference = LanguagePreference(values: lines)
        guard preference.ranges.count <= LanguagePreference.maxRanges else {
            return "kept \(preference.ranges.count) ranges"
        }
        for range in preference.ranges {
            guard (0 ... 1000).contains(range.quality),
                range.tag == [UInt8(ascii: "*")] || LanguagePreference.isRange(range.tag)
            else {
                return "kept a malformed range \(range)"
            }
        }
        let menu = localizedService.menu
        let keys = menu.locales.map(LanguageTag.lowercased)
        if let chosen = preference.locale(among: keys) {
            guard keys.indices.contains(chosen) else { return "chose locale \(chosen) of \(keys.count)" }
            // Lookup only shortens a range: the chosen tag is a range, or a range's prefix ending at a subtag.
            let named = preference.ranges.contains { range in
                let lowered = LanguageTag.lowercased(String(decoding: range.tag, as: UTF8.self))
                return range.quality > 0
                    && (range.tag == [UInt8(ascii: "*")] || lowered == keys[chosen]
                        || lowered.starts(with: keys[chosen] + [UInt8(ascii: "-")]))
            }
            guard named else { return "chose \(menu.locales[chosen]), which no range names" }
        }

        let text = String(decoding: first, as: UTF8.self)
        let headers = lines.map { (name: "Accept-Language", value: String(decoding: $0, as: UTF8.self)) }
        for request in [
            HTTPRequest(method: "GET", path: "/rows", headers: headers),
            HTTPRequest(method: "GET", path: "/count", query: [(name: "lang", value: text)], headers: headers),
            HTTPRequest(method: "GET", path: "/menu", query: [(name: "lang", value: text)], headers: headers)
        ] {
            let response = localizedService.respond(to: request)
            if let problem = checkAnswer(response) { return "GET \(request.path): \(problem)" }
            guard
                response.status != 200
                    || response.headers.contains(where: {
                        $0.name == "Content-Language" && menu.locales.contains($0.value)
                    })
            else { return "GET \(request.path) answered 200 without a Content-Language of the menu" }
            if request.path != "/rows", response.status == 200, !wellFormed {
                return "lang=\(String(reflecting: text)) was taken"
            }
        }
        return nil
    }
}
