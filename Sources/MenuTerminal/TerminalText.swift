/// Text that is safe to write to a terminal: whatever a server, a proxy or a person sent, shown as
/// characters and never read by the terminal as a command. The only way to make one is to
/// sanitize, so every text the client shows (``Span``, the screen; ``StandardError``, the messages
/// on stderr) goes through ``init(_:)``:
///
/// - C0 controls (U+0000-U+001F) show as their Control Pictures (ESC as ␛, BEL as ␇, LF as ␊) and
///   DEL as ␡, so an escape sequence is shown whole as it was sent (`␛]0;title␇`, `␛[41m`) and the
///   terminal sees no escape at all;
/// - C1 controls (U+0080-U+009F: 8-bit CSI, OSC, DCS, NEL among them) show as `<U+009B>`;
/// - the bidirectional controls, which reorder what is drawn after them (U+061C, U+200E, U+200F,
///   U+202A-U+202E, U+2066-U+2069), and the line and paragraph separators (U+2028, U+2029) show
///   as `<U+202E>`.
///
/// Bytes become text by `String(decoding:as: UTF8.self)` (MenuClient decodes every body so), which
/// turns invalid UTF-8, a raw C1 byte among it, into U+FFFD before it gets here.
///
/// Invariant: ``string`` holds none of the scalars above; sanitizing it again changes nothing;
/// every character of it is measured by ``DisplayWidth`` as the terminal draws it. Cost: O(n),
/// one scan when the text is clean (the usual case), a copy otherwise.
public struct TerminalText: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    public let string: String

    /// `untrusted` with every control shown as characters.
    public init(_ untrusted: some StringProtocol) {
        guard untrusted.unicodeScalars.contains(where: Self.mustBeShownAsText) else {
            string = String(untrusted)
            return
        }
        var shown = String.UnicodeScalarView()
        for scalar in untrusted.unicodeScalars {
            guard Self.mustBeShownAsText(scalar) else {
                shown.append(scalar)
                continue
            }
            switch scalar.value {
            case 0x00 ..< 0x20: shown.append(Unicode.Scalar(0x2400 + scalar.value)!)
            case 0x7F: shown.append("\u{2421}")
            default: shown.append(contentsOf: Self.codePoint(scalar).unicodeScalars)
            }
        }
        string = String(shown)
    }

    public init(stringLiteral text: String) { self.init(text) }

    public var description: String { string }

    /// Whether `scalar` would be read by a terminal as a command, or reorders the text drawn after it.
    static func mustBeShownAsText(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00 ..< 0x20, 0x7F ..< 0xA0: true
        case 0x061C, 0x200E, 0x200F, 0x2028 ... 0x202E, 0x2066 ... 0x2069: true
        default: false
        }
    }

    /// `<U+009B>`: the scalar's code point, four hex digits at least.
    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "<U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + ">"
    }
}
