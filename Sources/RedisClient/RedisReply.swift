import CHiredis

/// One RESP2 reply, copied out of hiredis's memory (nested arrays included).
///
/// Invariant: owns its bytes; nothing refers to the `redisReply` it came from, which is freed as
/// soon as it has been converted. Cost: one allocation per bulk string and per array.
package enum RedisReply: Sendable, Equatable {
    /// A simple string such as `OK` or `PONG`.
    case status(String)
    /// An error reply such as `NOSCRIPT No matching script`: returned, not thrown.
    case error(String)
    case integer(Int)
    /// A bulk string: binary safe.
    case bulk([UInt8])
    /// A null bulk string or null array.
    case null
    case array([RedisReply])

    /// Copies `reply` (and its elements); throws for a type RESP2 does not have.
    init(copying reply: UnsafePointer<redisReply>) throws(RedisError) {
        let value = reply.pointee
        func bytes() -> [UInt8] {
            guard let text = value.str, value.len > 0 else { return [] }
            return Array(UnsafeRawBufferPointer(start: text, count: value.len))
        }
        switch value.type {
        case REDIS_REPLY_STATUS: self = .status(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_ERROR: self = .error(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_INTEGER: self = .integer(Int(value.integer))
        case REDIS_REPLY_STRING: self = .bulk(bytes())
        case REDIS_REPLY_NIL: self = .null
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(value.elements)
            for index in 0 ..< value.elements {
                guard let element = chiredis_reply_element(reply, index) else {
                    throw .protocolViolation("a null array element")
                }
                elements.append(try RedisReply(copying: element))
            }
            self = .array(elements)
        default: throw .protocolViolation("a reply of unknown type \(value.type)")
        }
    }

    /// The text of a bulk or status reply (UTF-8, invalid bytes replaced); nil for the other kinds.
    package var text: String? {
        switch self {
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        default: nil
        }
    }
}
