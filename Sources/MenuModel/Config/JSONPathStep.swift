/// One step of a JSON path below a node: a member's key or an array element's index.
enum JSONPathStep {
    case key(String)
    case index(Int)

    /// `attributes.tags[2]`, with keys that are not plain names quoted: `attributes["a b"]`.
    static func path(_ steps: [JSONPathStep]) -> String {
        var text = ""
        for step in steps {
            switch step {
            case .index(let index): text += "[\(index)]"
            case .key(let key) where isPlainName(key): text += text.isEmpty ? key : "." + key
            case .key(let key): text += "[" + key.jsonQuoted + "]"
            }
        }
        return text
    }

    private static func isPlainName(_ key: String) -> Bool {
        !key.isEmpty
            && key.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                    UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}

extension String {
    /// The string as a JSON string literal: quotes, backslashes and control characters escaped.
    package var jsonQuoted: String {
        var text = "\""
        for scalar in unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            case "\r": text += "\\r"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }
}
