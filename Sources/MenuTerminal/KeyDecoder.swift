/// One key press as the terminal reports it in raw mode.
public enum Key: Sendable, Hashable {
    case up, down, left, right, pageUp, pageDown, home, end
    case enter, backspace, escape, tab
    /// Ctrl and a letter (`ctrl("c")` is 0x03 when the terminal does not turn it into SIGINT).
    case ctrl(Character)
    /// A printable character: a letter, a digit, a CJK ideograph typed through an input method.
    case character(Character)
}

/// Turns the bytes read from a terminal in raw mode into ``Key``s: UTF-8 text, the VT100/xterm
/// escape sequences for the arrows, Home/End and PageUp/PageDown (`ESC [ A`, `ESC O H`, `ESC [ 5 ~`,
/// …), Enter (CR or LF), Backspace (DEL or BS). Unknown sequences are dropped whole.
///
/// Invariant: bytes of a sequence or a UTF-8 character split across reads wait in ``pending``
/// until the rest arrives; a lone ESC waits too (it may start a sequence) until ``flush()``, which
/// the reader calls when no byte followed within a short pause. Cost: O(bytes).
public struct KeyDecoder: Sendable {
    public private(set) var pending: [UInt8] = []

    public init() {}

    /// The keys completed by `bytes` (after whatever was pending).
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Key] {
        pending.append(contentsOf: bytes)
        var keys: [Key] = []
        var start = 0
        while start < pending.count {
            guard let (key, length) = Self.decode(pending[start...]) else { break }
            if let key { keys.append(key) }
            start += length
        }
        pending.removeFirst(start)
        return keys
    }

    /// What is pending taken as typed: a lone ESC is Escape; an incomplete sequence or character is dropped.
    public mutating func flush() -> [Key] {
        defer { pending = [] }
        return pending == [0x1B] ? [.escape] : []
    }

    /// The key at the start of `bytes` and how many bytes it took (key nil: bytes consumed, no
    /// key); nil when `bytes` is an incomplete prefix.
    static func decode(_ bytes: ArraySlice<UInt8>) -> (key: Key?, length: Int)? {
        let first = bytes[bytes.startIndex]
        switch first {
        case 0x1B: return decodeEscape(bytes)
        case 0x0D, 0x0A: return (.enter, 1)
        case 0x7F, 0x08: return (.backspace, 1)
        case 0x09: return (.tab, 1)
        case 0x01 ... 0x1A: return (.ctrl(Character(Unicode.Scalar(first + 0x60))), 1)
        case 0x00, 0x1C ... 0x1F: return (nil, 1)
        default: return decodeUTF8(bytes)
        }
    }

    private static func decodeUTF8(_ bytes: ArraySlice<UInt8>) -> (key: Key?, length: Int)? {
        let first = bytes[bytes.startIndex]
        let length = first < 0x80 ? 1 : first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 0
        guard length > 0 else { return (nil, 1) }  // a stray continuation byte
        guard bytes.count >= length else { return nil }
        let encoded = bytes.prefix(length)
        guard encoded.dropFirst().allSatisfy({ $0 & 0xC0 == 0x80 }),
            let text = String(validating: encoded, as: UTF8.self), let character = text.first
        else { return (nil, 1) }
        return (.character(character), length)
    }

    private static func decodeEscape(_ bytes: ArraySlice<UInt8>) -> (key: Key?, length: Int)? {
        guard bytes.count >= 2 else { return nil }
        let introducer = bytes[bytes.startIndex + 1]
        if introducer == UInt8(ascii: "O") {
            guard bytes.count >= 3 else { return nil }
            return (final(bytes[bytes.startIndex + 2]), 3)
        }
        guard introducer == UInt8(ascii: "[") else { return (.escape, 1) }  // ESC then an ordinary key
        // CSI: parameter bytes 0x30-0x3F, intermediates 0x20-0x2F, then one final byte 0x40-0x7E.
        var index = bytes.startIndex + 2
        var parameters = ""
        while index < bytes.endIndex {
            let byte = bytes[index]
            if (0x40 ... 0x7E).contains(byte) {
                let length = index - bytes.startIndex + 1
                if byte == UInt8(ascii: "~") { return (tilde(parameters), length) }
                return (final(byte), length)
            }
            guard (0x20 ... 0x3F).contains(byte) else { return (nil, index - bytes.startIndex) }
            parameters.unicodeScalars.append(Unicode.Scalar(byte))
            index += 1
        }
        return nil
    }

    private static func final(_ byte: UInt8) -> Key? {
        switch byte {
        case UInt8(ascii: "A"): .up
        case UInt8(ascii: "B"): .down
        case UInt8(ascii: "C"): .right
        case UInt8(ascii: "D"): .left
        case UInt8(ascii: "H"): .home
        case UInt8(ascii: "F"): .end
        case UInt8(ascii: "M"): .enter  // keypad Enter in application mode (ESC O M)
        default: nil
        }
    }

    private static func tilde(_ parameters: String) -> Key? {
        switch parameters.split(separator: ";").first ?? "" {
        case "1", "7": .home
        case "4", "8": .end
        case "5": .pageUp
        case "6": .pageDown
        default: nil
        }
    }
}
