import LineLog
import Metrics
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How log lines are written (`--log-format`).
package enum LogFormat: String, Sendable, CaseIterable {
    /// `menu-server: MESSAGE` for events; `menu-server: time=… method=… route=… …` for requests.
    case text
    /// One JSON object a line: `{"time","level","message"}` or the request's fields.
    case json
}

/// How severe a line is; lines below `--log-level` are not written. Requests are `info`.
package enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, warn, error

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// menu-server's log on standard error: one line per request (the access log) and the events of
/// start-up, reloads, evictions and storage, in one format, written by a thread of its own
/// through a ``BoundedLogQueue`` (a full queue drops lines and counts them; a request never waits).
///
/// Invariant: a request line names the route template (never a session id or a raw path), the
/// status, the handler time, the body's bytes and the request id; nothing the client sent reaches
/// a line unescaped (the request id is checked printable ASCII; the method is JSON-escaped).
/// Cost per request: one ``BoundedLogQueue/submit(_:)`` of a small value; formatting is the writer's.
package final class ServerLog: Sendable {
    package enum Entry: Sendable {
        case request(RequestRecord)
        case event(level: LogLevel, wallNanoseconds: Int, message: String)
    }

    /// One request as its access line tells it.
    package struct RequestRecord: Sendable {
        package var wallNanoseconds: Int
        package var method: String
        /// An index into ``MenuMetrics/routeLabels``.
        package var route: Int
        package var status: Int
        package var durationNanoseconds: Int
        package var bytes: Int
        package var requestID: String
    }

    package let format: LogFormat
    package let level: LogLevel
    /// Whether request lines are written (not `--quiet`, and `--log-level` at most `info`).
    package let logsRequests: Bool
    private let queue: BoundedLogQueue<Entry>
    /// Run by the writer thread about once a second (eviction notes).
    private let watchers = Watchers()

    private final class Watchers: Sendable {
        let list = Mutex<[@Sendable () -> Void]>([])
    }

    package init(format: LogFormat, level: LogLevel, quiet: Bool, descriptor: Int32 = 2, capacity: Int = 8192) {
        self.format = format
        self.level = level
        logsRequests = !quiet && level <= .info
        let watchers = watchers
        let ticks = Atomic<Int>(0)
        queue = BoundedLogQueue(
            capacity: capacity, descriptor: descriptor,
            tick: {
                guard ticks.add(1, ordering: .relaxed).newValue % 50 == 0 else { return }  // every 50 × 20 ms
                for watch in watchers.list.withLock({ $0 }) { watch() }
            }
        ) { entry, bytes in
            Self.write(entry, format: format, to: &bytes)
        }
    }

    /// Logs `message` at `level` (dropped below the configured level).
    package func event(_ level: LogLevel, _ message: String) {
        guard level >= self.level else { return }
        queue.submit(.event(level: level, wallNanoseconds: Self.wallNanoseconds(), message: message))
    }

    /// Logs one request (when ``logsRequests``).
    @inline(__always)
    package func request(_ record: RequestRecord) {
        queue.submit(.request(record))
    }

    /// Lines dropped because the queue was full.
    package var dropped: Int { queue.dropped }

    /// Runs `watch` on the writer thread about once a second.
    package func watch(_ watch: @escaping @Sendable () -> Void) { watchers.list.withLock { $0.append(watch) } }

    /// Waits until every line logged so far has been written (bounded).
    package func flush() { queue.flush() }

    /// Writes what is queued and stops the writer, then drops the watches (which may hold this
    /// log through the loggers they write with: dropped, nothing keeps it alive).
    package func stop() {
        queue.stop()
        watchers.list.withLock { $0 = [] }
    }

    /// `menu_log_lines_dropped_total` for a scrape.
    package func writeMetrics(to out: inout PrometheusText) {
        out.single(
            "menu_log_lines_dropped_total", .counter, help: "Log lines dropped because the log queue was full.", dropped
        )
    }

    package static func wallNanoseconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }

    // MARK: Formatting (on the writer thread)

    /// Appends `entry`'s line. A request line is written byte by byte (no `String` is built): at
    /// tens of thousands of requests a second this thread shares the cores with the server's, and
    /// interpolating each line cost about a tenth of the server's CPU time under `wrk`.
    static func write(_ entry: Entry, format: LogFormat, to bytes: inout [UInt8]) {
        switch (entry, format) {
        case (.event(_, _, let message), .text):
            bytes.append(contentsOf: "menu-server: \(message)\n".utf8)
        case (.event(let level, let time, let message), .json):
            append("{\"time\":\"", to: &bytes)
            appendTimestamp(time, to: &bytes)
            append("\",\"level\":\"", to: &bytes)
            bytes.append(contentsOf: level.rawValue.utf8)
            append("\",\"message\":", to: &bytes)
            appendJSONString(message, to: &bytes)
            append("}\n", to: &bytes)
        case (.request(let record), _):
            let line = RequestLine(format: format)
            line.open(time: record.wallNanoseconds, to: &bytes)
            line.text("method", record.method, to: &bytes)
            line.text("route", MenuMetrics.routeLabels[record.route], to: &bytes)
            line.name("status", to: &bytes)
            appendDecimal(record.status, to: &bytes)
            line.name("duration_us", to: &bytes)
            appendMicroseconds(record.durationNanoseconds, to: &bytes)
            line.name("bytes", to: &bytes)
            appendDecimal(record.bytes, to: &bytes)
            line.text("request_id", record.requestID, to: &bytes)
            line.close(&bytes)
        }
    }

    /// How a request line's fields are written in each format: `menu-server: time=… name=value …`
    /// (text: a string that is not a plain token becomes `?`) or `{"time":"…","level":"info",
    /// "name":value,…}` (JSON: strings escaped). The field list itself is written once, in
    /// ``write(_:format:to:)``; a number is written after ``name(_:to:)`` the same way in both.
    private struct RequestLine {
        let format: LogFormat

        func open(time: Int, to bytes: inout [UInt8]) {
            switch format {
            case .text: append("menu-server: time=", to: &bytes)
            case .json: append("{\"time\":\"", to: &bytes)
            }
            appendTimestamp(time, to: &bytes)
            if format == .json { append("\",\"level\":\"info\"", to: &bytes) }
        }

        func name(_ name: StaticString, to bytes: inout [UInt8]) {
            switch format {
            case .text:
                bytes.append(UInt8(ascii: " "))
                append(name, to: &bytes)
                bytes.append(UInt8(ascii: "="))
            case .json:
                append(",\"", to: &bytes)
                append(name, to: &bytes)
                append("\":", to: &bytes)
            }
        }

        func text(_ field: StaticString, _ value: String, to bytes: inout [UInt8]) {
            name(field, to: &bytes)
            switch format {
            case .text: bytes.append(contentsOf: textSafe(value).utf8)
            case .json: appendJSONString(value, to: &bytes)
            }
        }

        func close(_ bytes: inout [UInt8]) {
            switch format {
            case .text: bytes.append(UInt8(ascii: "\n"))
            case .json: append("}\n", to: &bytes)
            }
        }
    }

    fileprivate static func append(_ text: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `value` in decimal, at least `width` digits (zero-padded; `width` at most 20).
    static func appendDecimal(_ value: Int, width: Int = 1, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for UInt64.max's 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0 || buffer.count - start < width
            bytes.append(contentsOf: buffer[start...])
        }
    }

    /// `2026-12-01T14:05:22.123Z` (UTC, milliseconds).
    static func appendTimestamp(_ nanoseconds: Int, to bytes: inout [UInt8]) {
        var seconds = time_t(nanoseconds / 1_000_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        appendDecimal(Int(parts.tm_year) + 1900, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDecimal(Int(parts.tm_mon) + 1, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDecimal(Int(parts.tm_mday), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDecimal(Int(parts.tm_hour), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDecimal(Int(parts.tm_min), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDecimal(Int(parts.tm_sec), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDecimal(nanoseconds / 1_000_000 % 1000, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The same timestamp as a string (tests).
    static func timestamp(_ nanoseconds: Int) -> String {
        var bytes: [UInt8] = []
        appendTimestamp(nanoseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Nanoseconds as microseconds with one decimal: `12.3`.
    static func appendMicroseconds(_ nanoseconds: Int, to bytes: inout [UInt8]) {
        appendDecimal(nanoseconds / 1000, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDecimal(nanoseconds / 100 % 10, to: &bytes)
    }

    /// A value for a text line: a token (printable ASCII, no space or quote) as it is, anything
    /// else as `?`, so that the line keeps its fields. The method comes from libmicrohttpd as a
    /// token; the route label and the request id are tokens by construction.
    static func textSafe(_ value: String) -> String {
        value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") } ? value : "?"
    }

    static func appendJSONString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0 ..< 0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [
                    0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]
                ])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
