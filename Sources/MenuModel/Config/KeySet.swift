/// The known keys of one object (a node or the document) read so far, one bit each: each may
/// appear once. Four bytes; no allocation.
struct KeySet {
    private let allowed: UInt16
    private var bits: UInt16 = 0

    static var node: KeySet { KeySet(allowed: 0b11_1110_0001_1111) }
    /// The document allows `title`, `items`, `searchable`, `defaultLocale`, `locales` and `timeZone`.
    static var document: KeySet { KeySet(allowed: 0b1_1110_0110) }

    private init(allowed: UInt16) { self.allowed = allowed }

    /// The key's bit, or nil when the key is not allowed here (reported as unknown instead).
    func bit(of key: String) -> UInt16? {
        let bit: UInt16
        switch key {
        case "id": bit = 1
        case "title": bit = 2
        case "items": bit = 4
        case "expanded": bit = 8
        case "attributes": bit = 16
        case "searchable": bit = 32
        case "defaultLocale": bit = 64
        case "locales": bit = 128
        case "timeZone": bit = 256
        case "minSelect": bit = 512
        case "maxSelect": bit = 1024
        case "hours": bit = 2048
        case "exceptions": bit = 4096
        case "whenUnavailable": bit = 8192
        default: return nil
        }
        return allowed & bit != 0 ? bit : nil
    }

    func contains(_ bit: UInt16) -> Bool { bits & bit != 0 }
    mutating func insert(_ bit: UInt16) { bits |= bit }
}
