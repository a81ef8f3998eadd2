// The `timestamp` fuzz target: the input as an RFC 3339 time. An accepted one is at most
// `Timestamp.maxLength` bytes, writes back in UTC, and that text reads back to the same instant,
// which also writes back to itself; a refused one says why.

import MenuAvailability

extension FuzzTarget {
    static func checkTimestamp(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        let instant: Timestamp
        do {
            instant = try Timestamp(rfc3339: text)
        } catch {
            return error.reason.isEmpty ? "refused without a reason" : nil
        }
        guard text.utf8.count <= Timestamp.maxLength else { return "accepted \(text.utf8.count) bytes" }
        let written = instant.rfc3339
        guard let again = try? Timestamp(rfc3339: written) else {
            return "\(written) (from \(text)) does not read back"
        }
        guard again == instant else {
            return "\(text) read as \(instant.milliseconds), its \(written) as \(again.milliseconds)"
        }
        guard again.rfc3339 == written else { return "\(written) writes back as \(again.rfc3339)" }
        return nil
    }
}
