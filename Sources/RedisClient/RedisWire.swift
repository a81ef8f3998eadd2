/// Commands in RESP2's wire form (`*<n>\r\n` then `$<length>\r\n<bytes>\r\n` per argument), as
/// hiredis's `redisFormatCommandArgv` writes them, built in Swift so that a caller can encode its
/// command on its own thread and a batch can go to hiredis as one buffer
/// (`redisAppendFormattedCommand`: one copy, no formatting on the pipeline's thread).
///
/// Invariant: every function writes whole RESP items; a command is its array header followed by
/// exactly that many bulk strings. Binary safe. Cost: ``command(_:)`` and
/// ``scriptTail(keys:arguments:)`` size their result exactly, allocate it once and copy each
/// argument with one `memcpy` (appending byte by byte cost 7,000 instructions a toggle).
enum RedisWire {
    /// The command `arguments` (the command name first).
    static func command(_ arguments: [[UInt8]]) -> [UInt8] {
        let size = headerSize(arguments.count) + arguments.reduce(0) { $0 + bulkSize($1.count) }
        return build(size) { writer in
            writer.header(arguments.count)
            for argument in arguments { writer.bulk(argument) }
        }
    }

    /// What follows `EVALSHA <hash>` in a script call: the key count, the keys, the arguments.
    static func scriptTail(keys: [[UInt8]], arguments: [[UInt8]]) -> [UInt8] {
        let size =
            bulkSize(decimalSize(keys.count)) + keys.reduce(0) { $0 + bulkSize($1.count) }
            + arguments.reduce(0) { $0 + bulkSize($1.count) }
        return build(size) { writer in
            writer.bulk(decimal: keys.count)
            for key in keys { writer.bulk(key) }
            for argument in arguments { writer.bulk(argument) }
        }
    }

    /// `*<count>\r\n$7\r\nEVALSHA\r\n$<n>\r\n<hash>\r\n`, written in place at the end of `wire`:
    /// what goes before a ``scriptTail(keys:arguments:)`` of `count - 3` items.
    static func appendScriptHead(count: Int, hash: [UInt8], to wire: inout [UInt8]) {
        let size = headerSize(count) + bulkSize(evalsha.count) + bulkSize(hash.count)
        let start = wire.count
        wire.append(contentsOf: repeatElement(0, count: size))
        wire.withUnsafeMutableBufferPointer { whole in
            var writer = Writer(buffer: UnsafeMutableBufferPointer(rebasing: whole[start...]))
            writer.header(count)
            writer.bulk(evalsha)
            writer.bulk(hash)
            precondition(writer.offset == size, "RESP size \(size) computed, \(writer.offset) written")
        }
    }

    private static let evalsha = Array("EVALSHA".utf8)

    private static func headerSize(_ count: Int) -> Int { 1 + decimalSize(count) + 2 }

    private static func bulkSize(_ length: Int) -> Int { 1 + decimalSize(length) + 2 + length + 2 }

    /// Digits of `value` (at least 0) in decimal.
    private static func decimalSize(_ value: Int) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }

    /// An array of exactly `size` bytes, all written by `body`.
    private static func build(_ size: Int, _ body: (inout Writer) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var writer = Writer(buffer: buffer)
            body(&writer)
            precondition(writer.offset == size, "RESP size \(size) computed, \(writer.offset) written")
            initialized = size
        }
    }

    /// Writes RESP items into a buffer sized for them.
    private struct Writer {
        let buffer: UnsafeMutableBufferPointer<UInt8>
        var offset = 0

        mutating func header(_ count: Int) {
            byte(UInt8(ascii: "*"))
            decimal(count)
            lineEnd()
        }

        mutating func bulk(_ bytes: [UInt8]) {
            byte(UInt8(ascii: "$"))
            decimal(bytes.count)
            lineEnd()
            bytes.withUnsafeBufferPointer { source in
                guard let start = source.baseAddress, !source.isEmpty else { return }
                buffer.baseAddress!.advanced(by: offset).update(from: start, count: source.count)
            }
            offset += bytes.count
            lineEnd()
        }

        mutating func bulk(decimal value: Int) {
            byte(UInt8(ascii: "$"))
            decimal(decimalSize(value))
            lineEnd()
            decimal(value)
            lineEnd()
        }

        private mutating func byte(_ value: UInt8) {
            buffer[offset] = value
            offset += 1
        }

        private mutating func lineEnd() {
            byte(UInt8(ascii: "\r"))
            byte(UInt8(ascii: "\n"))
        }

        /// `value` (at least 0) in decimal digits, written from the last.
        private mutating func decimal(_ value: Int) {
            let digits = decimalSize(value)
            var rest = value
            for position in stride(from: offset + digits - 1, through: offset, by: -1) {
                buffer[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            offset += digits
        }
    }
}
