// Hostile portable sessions against the real server over raw sockets: malformed POST /sessions
// bodies (deep nesting, repeated keys, huge arrays, long ids, invalid UTF-8, numbers for strings,
// truncated JSON). Each gets a 4xx, creates no session,
// changes none, and the server goes on serving (HostileInputTests.expectRefusedWithoutChange).

import Foundation
import Testing

extension HostileCase {
    /// `POST /sessions` with `body` and its true Content-Length.
    static func post(_ name: String, _ accepted: Outcome..., body: @escaping @Sendable () -> [UInt8]) -> HostileCase {
        HostileCase(name, accepted) {
            let payload = body()
            return Array("POST /sessions HTTP/1.1\r\n\(host)Content-Length: \(payload.count)\r\n\r\n".utf8) + payload
        }
    }

    /// `POST /sessions` with `body` as UTF-8 text.
    static func post(_ name: String, _ body: String) -> HostileCase {
        post(name, .json(400, "invalid_body")) { Array(body.utf8) }
    }

    /// `{"expanded": [ids…]}` with `count` copies of `element`, about `count · (element + 1)` bytes.
    static func expanded(repeating element: String, count: Int) -> String {
        #"{"expanded":["# + Array(repeating: element, count: count).joined(separator: ",") + "]}"
    }

    static let portable: [HostileCase] = [
        post("nested 30000 arrays deep", .json(400, "invalid_body")) {
            Array(repeating: UInt8(ascii: "["), count: 30_000) + Array(repeating: UInt8(ascii: "]"), count: 30_000)
        },
        post(
            "a mark nested 5000 objects deep",
            #"{"marks":["# + String(repeating: #"{"id":"#, count: 5_000) + "1" + String(repeating: "}", count: 5_000)
                + "]}"),
        post(
            "an unknown key nested 600 arrays deep",
            #"{"x":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}"),
        post(
            "expanded nested 64 arrays deep",
            #"{"expanded":"# + String(repeating: "[", count: 64) + String(repeating: "]", count: 64) + "}"),
        post("base given twice", #"{"base":"expanded","base":"collapsed"}"#),
        post("base given twice, once escaped", #"{"base":"expanded","\u0062ase":"collapsed"}"#),
        post("id twice in a mark", #"{"marks":[{"id":"drinks","mode":"expanded","id":"beer"}]}"#),
        post("an id in both lists", #"{"expanded":["drinks"],"collapsed":["drinks"]}"#),
        post("16000 copies of one id", expanded(repeating: #""a""#, count: 16_000)),
        post("30000 numbers for ids", expanded(repeating: "1", count: 30_000)),
        post("12000 nulls for ids", expanded(repeating: "null", count: 12_000)),
        post(
            "15000 empty objects as marks",
            #"{"marks":["# + Array(repeating: "{}", count: 15_000).joined(separator: ",") + "]}"),
        post("a 70 KB array, over the body limit", .json(413, "payload_too_large")) {
            Array(expanded(repeating: #""ab""#, count: 15_000).utf8)
        },
        post(
            "an id of 129 characters", expanded(repeating: "\"" + String(repeating: "a", count: 129) + "\"", count: 1)),
        post("an id of 60 KB", expanded(repeating: "\"" + String(repeating: "a", count: 60_000) + "\"", count: 1)),
        post("an id with an escaped NUL", #"{"collapsed":["dr\u0000inks"]}"#),
        post("an id with a raw NUL byte", "{\"collapsed\":[\"dr\u{0}inks\"]}"),
        post("an id with a lone surrogate escape", #"{"collapsed":["\udc00"]}"#),
        post("invalid UTF-8 in an id", .json(400, "invalid_body")) {
            Array(#"{"expanded":["dri"#.utf8) + [0xFF, 0xFE] + Array(#"nks"]}"#.utf8)
        },
        post("an overlong UTF-8 quote", .json(400, "invalid_body")) {
            Array(#"{"expanded":["a"#.utf8) + [0xC0, 0xA2] + Array("]}".utf8)
        },
        post("a number for base", #"{"base":1e999999}"#),
        post("numbers for a mark's id and mode", #"{"marks":[{"id":1,"mode":2}]}"#),
        post("a boolean for expanded", #"{"expanded":true}"#),
        post("a string for marks", #"{"marks":"drinks"}"#),
        post("truncated inside an id", #"{"expanded":["dri"#),
        post("truncated after a mark", #"{"marks":[{"id":"drinks","mode":"expanded"}"#),
        post("only an opening brace", "{"),
        post("trailing garbage", #"{"expanded":[]}]"#),
        post("a trailing comma", #"{"expanded":["drinks",]}"#),
        post("a byte-order mark", "\u{FEFF}{}"),
        post(
            "the whole GET answer posted back",
            #"{"version":"x","sessionId":"AAAAAAAAAAAAAAAAAAAAAA","revision":1,"expansion":{"base":"default"}}"#)
    ]
}

extension AppTests {
    @Suite("Hostile input: portable session bodies and ids")
    struct HostilePortableSessionTests {
        @Test(arguments: HostileCase.portable)
        func aHostilePortableRequestGets4xxCreatesNoSessionAndChangesNone(_ hostile: HostileCase) async throws {
            try await HostileInputTests.expectRefusedWithoutChange(hostile)
        }
    }
}
