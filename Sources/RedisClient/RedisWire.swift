/// Commands in RESP2's wire form (`*<n>\r\n` then `$<length>\r\n<bytes>\r\n` per argument), as
/// hiredis's `redisFormatCommandArgv` writes them, built in Swift so that a caller can encode its
/// command on its own thread and a batch can go to hiredis as one buffer
/// (`redisAppendFormattedCommand`: one copy, no formatting on the pipeline's thread).
///
/// Invariant: every function appends whole RESP items; a command is its array header followed by
/// exactly that many bulk strings. Binary safe. Cost: one pass over the bytes, no allocation but
/// the buffer's growth.
enum RedisWire {
    /// The command `arguments` (the command name first).
    static func command(_ arguments: [[UInt8]]) -> [UInt8] {
        var wire: [UInt8] = []
        wire.reserveCapacity(arguments.reduce(16) { $0 + $1.count + 16 })
        appendHeader(count: arguments.count, to: &wire)
        for argument in arguments { appendBulk(argument, to: &wire) }
        return wire
    }

    /// `*<count>\r\n`: an array of `count` items follows.
    static func appendHeader(count: Int, to wire: inout [UInt8]) {
        wire.append(UInt8(ascii: "*"))
        appendDecimal(count, to: &wire)
        appendLineEnd(to: &wire)
    }

    /// `$<length>\r\n<bytes>\r\n`.
    static func appendBulk(_ bytes: [UInt8], to wire: inout [UInt8]) {
        wire.append(UInt8(ascii: "$"))
        appendDecimal(bytes.count, to: &wire)
        appendLineEnd(to: &wire)
        wire.append(contentsOf: bytes)
        appendLineEnd(to: &wire)
    }

    /// The bulk string of `value` in decimal.
    static func appendBulk(decimal value: Int, to wire: inout [UInt8]) {
        var digits: [UInt8] = []
        appendDecimal(value, to: &digits)
        appendBulk(digits, to: &wire)
    }

    private static func appendLineEnd(to wire: inout [UInt8]) {
        wire.append(UInt8(ascii: "\r"))
        wire.append(UInt8(ascii: "\n"))
    }

    /// `value`'s ASCII decimal digits (a leading `-` when negative), without a String.
    private static func appendDecimal(_ value: Int, to wire: inout [UInt8]) {
        if value < 0 { wire.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var divisor: UInt = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        repeat {
            wire.append(UInt8(ascii: "0") + UInt8(magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        } while divisor > 0
    }
}
