#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Formatting ``ServerLog``'s lines, on its writer thread.
//
// A line is written with raw stores into a scratch buffer sized for it in advance
// (``ServerLog/LineWriter``), then appended to the drain's bytes in one copy; no `String` is built
// for a request line, and the date and time of a second are formatted once for all its lines
// (``ServerLog/SecondStamp``). At tens of thousands of requests a second this thread shares the
// cores with the server's: interpolating each line cost about a tenth of the server's CPU time
// under `wrk`, appending field by field to an array 3,400 instructions a line; now about 1,600.
extension ServerLog {
    /// Appends the lines of `entries`, in order.
    static func write(_ entries: [Entry], format: LogFormat, to bytes: inout [UInt8]) {
        var stamp = SecondStamp()
        var scratch = [UInt8](repeating: 0, count: 1024)
        for entry in entries {
            let bound = lineBound(entry)
            if bound > scratch.count { scratch = [UInt8](repeating: 0, count: bound) }
            scratch.withUnsafeMutableBufferPointer { scratch in
                var line = LineWriter(scratch.baseAddress!)
                write(entry, format: format, stamp: &stamp, to: &line)
                bytes.append(contentsOf: UnsafeBufferPointer(start: scratch.baseAddress, count: line.count))
            }
        }
    }

    /// The most bytes `entry`'s line can take, in either format: 256 for the fixed text and
    /// numbers, and 6 a byte for each string (the longest JSON escape, `\u001f`).
    private static func lineBound(_ entry: Entry) -> Int {
        switch entry {
        case .event(_, _, let message): 256 + 6 * message.utf8.count
        case .request(let record):
            256 + 6
                * (record.method.utf8.count + MenuMetrics.routeLabels[record.route].utf8.count
                    + record.requestID.utf8.count)
        }
    }

    private static func write(_ entry: Entry, format: LogFormat, stamp: inout SecondStamp, to line: inout LineWriter) {
        switch (entry, format) {
        case (.event(_, _, let message), .text):
            line.raw("menu-server: ")
            line.utf8(message)
            line.byte(UInt8(ascii: "\n"))
        case (.event(let level, let time, let message), .json):
            line.raw("{\"time\":\"")
            stamp.write(time, to: &line)
            line.raw("\",\"level\":\"")
            line.utf8(level.rawValue)
            line.raw("\",\"message\":")
            line.jsonString(message)
            line.raw("}\n")
        case (.request(let record), _):
            let fields = RequestFields(format: format)
            fields.open(time: record.wallNanoseconds, stamp: &stamp, to: &line)
            fields.text("method", record.method, to: &line)
            fields.text("route", MenuMetrics.routeLabels[record.route], to: &line)
            fields.name("status", to: &line)
            line.decimal(record.status)
            fields.name("duration_us", to: &line)
            line.decimal(record.durationNanoseconds / 1000)  // microseconds with one decimal: `12.3`
            line.byte(UInt8(ascii: "."))
            line.decimal(record.durationNanoseconds / 100 % 10)
            fields.name("bytes", to: &line)
            line.decimal(record.bytes)
            fields.text("request_id", record.requestID, to: &line)
            fields.close(&line)
        }
    }

    /// How a request line's fields are written in each format: `menu-server: time=… name=value …`
    /// (text: a string that is not a plain token becomes `?`) or `{"time":"…","level":"info",
    /// "name":value,…}` (JSON: strings escaped). The field list itself is written once, in
    /// ``write(_:format:stamp:to:)``; a number is written after ``name(_:to:)`` the same way in both.
    private struct RequestFields {
        let format: LogFormat

        func open(time: Int, stamp: inout SecondStamp, to line: inout LineWriter) {
            switch format {
            case .text: line.raw("menu-server: time=")
            case .json: line.raw("{\"time\":\"")
            }
            stamp.write(time, to: &line)
            if format == .json { line.raw("\",\"level\":\"info\"") }
        }

        func name(_ name: StaticString, to line: inout LineWriter) {
            switch format {
            case .text:
                line.byte(UInt8(ascii: " "))
                line.raw(name)
                line.byte(UInt8(ascii: "="))
            case .json:
                line.raw(",\"")
                line.raw(name)
                line.raw("\":")
            }
        }

        func text(_ field: StaticString, _ value: String, to line: inout LineWriter) {
            name(field, to: &line)
            switch format {
            case .text: line.textSafe(value)
            case .json: line.jsonString(value)
            }
        }

        func close(_ line: inout LineWriter) {
            switch format {
            case .text: line.byte(UInt8(ascii: "\n"))
            case .json: line.raw("}\n")
            }
        }
    }

    /// A time as a line shows it, `2026-12-01T14:05:22.123Z` (UTC, milliseconds), with the part
    /// up to the second formatted once (`gmtime_r` and the digits) for all the lines of that second.
    struct SecondStamp {
        private var second = Int.min
        /// `2026-12-01T14:05:22`, of `second` (19 bytes).
        private var text = [UInt8](repeating: 0, count: 19)

        mutating func write(_ nanoseconds: Int, to line: inout LineWriter) {
            let second = nanoseconds / 1_000_000_000
            if second != self.second {
                self.second = second
                text.withUnsafeMutableBufferPointer { text in
                    var stamp = LineWriter(text.baseAddress!)
                    stamp.dateAndTime(ofSecond: second)
                }
            }
            text.withUnsafeBufferPointer { line.bytes($0) }
            line.byte(UInt8(ascii: "."))
            line.decimal(nanoseconds / 1_000_000 % 1000, width: 3)
            line.byte(UInt8(ascii: "Z"))
        }
    }

    /// Writes a line's bytes with raw stores from `start` on; the caller has made room for all
    /// of them (``lineBound(_:)``).
    struct LineWriter {
        private let start: UnsafeMutablePointer<UInt8>
        private var out: UnsafeMutablePointer<UInt8>

        init(_ start: UnsafeMutablePointer<UInt8>) {
            self.start = start
            out = start
        }

        /// Bytes written so far.
        var count: Int { out - start }

        mutating func byte(_ byte: UInt8) {
            out.pointee = byte
            out += 1
        }

        mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let source = bytes.baseAddress else { return }
            out.update(from: source, count: bytes.count)
            out += bytes.count
        }

        mutating func raw(_ text: StaticString) {
            bytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }

        /// `text`'s UTF-8 as it is.
        mutating func utf8(_ text: String) {
            var text = text
            text.withUTF8 { bytes($0) }
        }

        /// `value` in decimal, at least `width` digits (zero-padded; `width` at most 20).
        mutating func decimal(_ value: Int, width: Int = 1) {
            if value < 0 { byte(UInt8(ascii: "-")) }
            var magnitude = value.magnitude
            var length = 1
            var bound: UInt = 10
            while magnitude >= bound && length < 19 {  // 19 digits: UInt's 10^19 is the last bound
                length += 1
                bound &*= 10
            }
            if length == 19 && magnitude >= bound { length = 20 }
            length = max(length, width)
            var position = length
            repeat {
                position -= 1
                out[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while position > 0
            out += length
        }

        /// `2026-12-01T14:05:22` (UTC) of the second `second` since the epoch.
        mutating func dateAndTime(ofSecond second: Int) {
            var seconds = time_t(second)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            decimal(Int(parts.tm_year) + 1900, width: 4)
            byte(UInt8(ascii: "-"))
            decimal(Int(parts.tm_mon) + 1, width: 2)
            byte(UInt8(ascii: "-"))
            decimal(Int(parts.tm_mday), width: 2)
            byte(UInt8(ascii: "T"))
            decimal(Int(parts.tm_hour), width: 2)
            byte(UInt8(ascii: ":"))
            decimal(Int(parts.tm_min), width: 2)
            byte(UInt8(ascii: ":"))
            decimal(Int(parts.tm_sec), width: 2)
        }

        /// A value for a text line: a token (printable ASCII, no space or quote) as it is, anything
        /// else as `?`, so that the line keeps its fields. The method comes from libmicrohttpd as a
        /// token; the route label and the request id are tokens by construction.
        mutating func textSafe(_ value: String) {
            var value = value
            value.withUTF8 { utf8 in
                if utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }) {
                    bytes(utf8)
                } else {
                    byte(UInt8(ascii: "?"))
                }
            }
        }

        mutating func jsonString(_ text: String) {
            byte(UInt8(ascii: "\""))
            for value in text.utf8 {
                switch value {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    byte(UInt8(ascii: "\\"))
                    byte(value)
                case 0 ..< 0x20:
                    let hex: StaticString = "0123456789abcdef"
                    raw("\\u00")
                    byte(hex.utf8Start[Int(value >> 4)])
                    byte(hex.utf8Start[Int(value & 0xF)])
                default: byte(value)
                }
            }
            byte(UInt8(ascii: "\""))
        }
    }
}
