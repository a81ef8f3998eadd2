/// The known keys of one object (a node or the document) read so far, one bit each: each may
/// appear once. Two bytes; no allocation.
struct KeySet {
    private let allowed: UInt8
    private var bits: UInt8 = 0

    static var node: KeySet { KeySet(allowed: 0b11111) }
    /// The document allows `title`, `items`, `searchable`, `defaultLocale` and `locales`.
    static var document: KeySet { KeySet(allowed: 0b1110_0110) }

    private init(allowed: UInt8) { self.allowed = allowed }

    /// The key's bit, or nil when the key is not allowed here (reported as unknown instead).
    func bit(of key: String) -> UInt8? {
        let bit: UInt8
        switch key {
        case "id": bit = 1
        case "title": bit = 2
        case "items": bit = 4
        case "expanded": bit = 8
        case "attributes": bit = 16
        case "searchable": bit = 32
        case "defaultLocale": bit = 64
        case "locales": bit = 128
        default: return nil
        }
        return allowed & bit != 0 ? bit : nil
    }

    func contains(_ bit: UInt8) -> Bool { bits & bit != 0 }
    mutating func insert(_ bit: UInt8) { bits |= bit }
}
