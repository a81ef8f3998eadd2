import Foundation
import MenuApp
import MenuTestSupport
import Testing

extension AppTests {
    /// Hostile `Accept-Language` headers and `lang` parameters over a raw socket, against a menu with
    /// locales (a menu without them reads neither): a header is never an error (a malformed one counts
    /// as absent), a malformed `lang` is a 400 naming it, nothing is a 5xx, and no session changes.
    @Suite("Hostile input: Accept-Language and lang")
    struct HostileLocaleTests {
        static let cases: [HostileCase] = {
            let h = HostileCase.host
            let rows = "GET /rows?limit=5 HTTP/1.1\r\n\(h)"
            let ok = HostileCase.Outcome.json(200, "")
            let refused = HostileCase.Outcome.json(400, "invalid_parameter")
            return [
                HostileCase.text("Accept-Language of 6000 bytes", ok, .mhd(431)) {
                    "\(rows)Accept-Language: \(String(repeating: "zh-Hant-", count: 750))\r\n\r\n"
                },
                HostileCase.text("Accept-Language with 5000 ranges", ok, .mhd(431)) {
                    "\(rows)Accept-Language: \(Array(repeating: "en;q=0.5", count: 5000).joined(separator: ","))\r\n\r\n"
                },
                HostileCase.text("Accept-Language bad q-values", ok) {
                    "\(rows)Accept-Language: en;q=2, zh;q=-1, fr;q=0.0001, de;q=1.5, x;q=\r\n\r\n"
                },
                HostileCase.text("Accept-Language only separators", ok) {
                    "\(rows)Accept-Language: , ;, ;q=1,,\t,\r\n\r\n"
                },
                HostileCase.text("Accept-Language empty", ok) { "\(rows)Accept-Language:\r\n\r\n" },
                HostileCase.text("Accept-Language with a NUL", ok, .mhd(400), .closed) {
                    "\(rows)Accept-Language: en\u{0}zh\r\n\r\n"
                },
                HostileCase.text("Accept-Language in UTF-8", ok) { "\(rows)Accept-Language: 中文, zh-漢字;q=0.9\r\n\r\n" },
                HostileCase.bytes("Accept-Language with invalid UTF-8", ok, .mhd(400)) {
                    Array("\(rows)Accept-Language: en-".utf8) + [0xFF, 0xC0, 0x80] + Array(";q=0.5\r\n\r\n".utf8)
                },
                HostileCase.text("Accept-Language subtags of 100 letters", ok) {
                    "\(rows)Accept-Language: \(String(repeating: "a", count: 100))-b\r\n\r\n"
                },
                HostileCase.text("Accept-Language on 100 lines", ok, .mhd(431)) {
                    rows + String(repeating: "Accept-Language: fr;q=0.1, *;q=0\r\n", count: 100) + "\r\n"
                },
                HostileCase.text("lang malformed", refused) { "GET /rows?lang=en_US HTTP/1.1\r\n\(h)\r\n" },
                HostileCase.text("lang empty", refused) { "GET /rows?lang= HTTP/1.1\r\n\(h)\r\n" },
                HostileCase.text("lang without a value", refused) { "GET /count?lang HTTP/1.1\r\n\(h)\r\n" },
                HostileCase.text("lang of 5000 bytes", refused, .mhd(414), .mhd(431)) {
                    "GET /rows?lang=\(String(repeating: "ab-", count: 1666))ab HTTP/1.1\r\n\(h)\r\n"
                },
                HostileCase.text("lang with a percent-encoded NUL", refused) {
                    "GET /rows?lang=en%00 HTTP/1.1\r\n\(h)\r\n"
                },
                HostileCase.text("lang in percent-encoded UTF-8", refused) {
                    "GET /rows?lang=%E4%B8%AD%E6%96%87 HTTP/1.1\r\n\(h)\r\n"
                },
                HostileCase.text("lang with invalid UTF-8", refused) {
                    "GET /rows?lang=en-%FF%C0 HTTP/1.1\r\n\(h)\r\n"
                },
                HostileCase.text("lang given twice", refused) { "GET /rows?lang=en&lang=zh HTTP/1.1\r\n\(h)\r\n" },
                HostileCase.text("lang a wildcard", refused) { "GET /changes?since=0&lang=* HTTP/1.1\r\n\(h)\r\n" }
            ]
        }()

        @Test(arguments: cases)
        func aHostileLanguageIsNeverA5xxAndChangesNoSession(_ hostile: HostileCase) async throws {
            try await HostileInputTests.expectRefusedWithoutChange(hostile) {
                $0.configPath = LivePaths.localizedMenuConfig
            }
        }
    }
}
