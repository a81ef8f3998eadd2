import Foundation

/// The one folding search applies to every text it indexes and to every query, so that a query
/// matches a title when its folded bytes occur in the title's folded bytes: Unicode case folding,
/// diacritics removed and width folded (`Café`, `CAFE` and `café` all fold to `cafe`; a
/// full-width `ＢＥＥＲ` to `beer`), Foundation's `folding(options:locale:)` with no locale, so the
/// result does not depend on the server's environment.
///
/// Invariant: the result is valid UTF-8 (it never holds the byte 0xFF, which ``SearchIndex`` uses
/// as its separator). Cost: O(length); an all-ASCII text is lowered byte by byte without
/// Foundation (what Foundation gives for it, the tests check), any other goes through Foundation
/// (not measured alone; the 1.1M-node build is in docs/performance.md, Search).
public enum SearchFolding {
    /// The folded UTF-8 bytes of `text`.
    public static func fold(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        append(text, to: &bytes)
        return bytes
    }

    /// Appends the folded UTF-8 bytes of `text` to `bytes`.
    public static func append(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        let isASCII = text.withUTF8 { utf8 in
            utf8.allSatisfy { $0 < 0x80 }
        }
        if isASCII {
            text.withUTF8 { utf8 in
                let start = bytes.count
                bytes.append(contentsOf: utf8)
                bytes.withUnsafeMutableBufferPointer { folded in
                    for index in start ..< folded.count where folded[index] &- 0x41 < 26 { folded[index] |= 0x20 }
                }
            }
        } else {
            bytes.append(contentsOf: foundationFold(text).utf8)
        }
    }

    /// Foundation's folding, the reference for every text (the ASCII path must agree with it).
    public static func foundationFold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }
}
