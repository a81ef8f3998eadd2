/// The one-character escapes of a JSON string (RFC 8259 section 7), shared by every JSON parser of
/// the project (the config's and the PUT body's), so they cannot disagree.
package enum JSONEscape {
    /// The byte `\` followed by `escape` stands for; nil for `u` (four hex digits follow) and for
    /// anything that is no escape.
    package static func byte(for escape: UInt8) -> UInt8? {
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): escape
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }
}
