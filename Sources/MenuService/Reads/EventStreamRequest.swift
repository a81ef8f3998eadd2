import HTTPCore

/// What makes `GET /changes` a `text/event-stream`, and where it resumes: the request's `Accept`
/// and `Last-Event-ID` headers.
///
/// `Accept` (RFC 9110 §12.5.1) is read leniently, as a server may ignore what it cannot use: the
/// request streams when some element of some `Accept` line is the media range `text/event-stream`
/// (case-insensitive, parameters allowed) with a `q` other than 0. `*/*` does not stream: a stream
/// is asked for by name, as `EventSource` does.
///
/// `Last-Event-ID` (WHATWG HTML §9.2) is what an `EventSource` sends when it reconnects: the `id:`
/// of the last event it received, which this server makes a revision. It must be 1 to 18 ASCII
/// digits (repeated lines must agree); anything else is `400 invalid_parameter`, because resuming
/// from a guess would skip or repeat changes. An empty value is as if absent (the spec's reset).
///
/// Cost: one pass over each header's bytes, no allocation.
package enum EventStreamRequest {
    /// Whether `headers` ask for `text/event-stream`.
    package static func wantsEventStream(_ headers: HTTPFields) -> Bool {
        for position in headers.indices where headers.name(at: position, equals: "accept") {
            let found = headers.withValue(at: position) { value -> Bool in
                guard let value else { return false }
                return value.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).contains {
                    isEventStreamElement($0)
                }
            }
            if found { return true }
        }
        return false
    }

    /// The revision `Last-Event-ID` names; nil without one (or an empty one).
    package static func lastEventID(_ headers: HTTPFields) throws(APIError) -> Int? {
        var found: Int?
        for position in headers.indices where headers.name(at: position, equals: "last-event-id") {
            let parsed = headers.withValue(at: position) { value -> Int?? in
                guard let value, !value.isEmpty else { return .some(nil) }
                guard value.count <= 18, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                    return nil
                }
                return .some(value.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) })
            }
            guard let parsed else {
                throw .invalidParameter(
                    "Last-Event-ID must be the id of an event this server sent: a revision, 1 to 18 digits")
            }
            guard let revision = parsed else { continue }
            guard found == nil || found == revision else {
                throw .invalidParameter("Last-Event-ID is given twice with different revisions")
            }
            found = revision
        }
        return found
    }

    /// Whether one `Accept` element is `text/event-stream` with a `q` other than 0.
    private static func isEventStreamElement(_ element: Slice<UnsafeRawBufferPointer>) -> Bool {
        let parts = element.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        guard let media = parts.first, equalsIgnoringCase(trimmed(media), "text/event-stream") else { return false }
        for parameter in parts.dropFirst() {
            let parameter = trimmed(parameter)
            guard parameter.count >= 2, parameter[parameter.startIndex] | 0x20 == UInt8(ascii: "q"),
                parameter[parameter.startIndex + 1] == UInt8(ascii: "=")
            else { continue }
            let weight = parameter.dropFirst(2)
            // q=0, q=0., q=0.0, q=0.00, q=0.000: not acceptable. Any other value accepts.
            if weight.first == UInt8(ascii: "0"),
                weight.dropFirst().allSatisfy({ $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "0") }),
                weight.dropFirst().filter({ $0 == UInt8(ascii: ".") }).count <= 1
            {
                return false
            }
        }
        return true
    }

    private static func trimmed<Bytes: BidirectionalCollection>(_ bytes: Bytes) -> Bytes.SubSequence
    where Bytes.Element == UInt8 {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return bytes[bytes.endIndex...] }
        return bytes[first ... last]
    }

    private static func equalsIgnoringCase<Bytes: Collection>(_ bytes: Bytes, _ text: StaticString) -> Bool
    where Bytes.Element == UInt8 {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        return text.withUTF8Buffer { expected in
            zip(bytes, expected).allSatisfy { byte, lower in
                (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte) == lower
            }
        }
    }
}
