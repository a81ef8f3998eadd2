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
        queue = BoundedLogQueue(capacity: capacity, descriptor: descriptor, tick: {
            guard ticks.add(1, ordering: .relaxed).newValue % 50 == 0 else { return }  // every 50 × 20 ms
            for watch in watchers.list.withLock({ $0 }) { watch() }
        }) { entry, bytes in
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
        out.single("menu_log_lines_dropped_total", .counter, help: "Log lines dropped because the log queue was full.", dropped)
    }

    package static func wallNanoseconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }

    // MARK: Formatting (on the writer thread)

    static func write(_ entry: Entry, format: LogFormat, to bytes: inout [UInt8]) {
        switch (entry, format) {
        case (.event(_, _, let message), .text):
            bytes.append(contentsOf: "menu-server: \(message)\n".utf8)
        case (.event(let level, let time, let message), .json):
            bytes.append(contentsOf: "{\"time\":\"\(timestamp(time))\",\"level\":\"\(level.rawValue)\",\"message\":".utf8)
            appendJSONString(message, to: &bytes)
            bytes.append(contentsOf: "}\n".utf8)
        case (.request(let record), .text):
            let route = MenuMetrics.routeLabels[record.route]
            bytes.append(contentsOf: ("menu-server: time=\(timestamp(record.wallNanoseconds)) method=\(textSafe(record.method)) route=\(route) "
                + "status=\(record.status) duration_us=\(microseconds(record.durationNanoseconds)) bytes=\(record.bytes) "
                + "request_id=\(record.requestID)\n").utf8)
        case (.request(let record), .json):
            bytes.append(contentsOf: "{\"time\":\"\(timestamp(record.wallNanoseconds))\",\"level\":\"info\",\"method\":".utf8)
            appendJSONString(record.method, to: &bytes)
            bytes.append(contentsOf: ",\"route\":".utf8)
            appendJSONString(MenuMetrics.routeLabels[record.route], to: &bytes)
            bytes.append(contentsOf: (",\"status\":\(record.status),\"duration_us\":\(microseconds(record.durationNanoseconds))"
                + ",\"bytes\":\(record.bytes),\"request_id\":").utf8)
            appendJSONString(record.requestID, to: &bytes)
            bytes.append(contentsOf: "}\n".utf8)
        }
    }

    /// `2026-12-01T14:05:22.123Z` (UTC, milliseconds).
    static func timestamp(_ nanoseconds: Int) -> String {
        var seconds = time_t(nanoseconds / 1_000_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let milliseconds = nanoseconds / 1_000_000 % 1000
        let fraction = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }

    /// Nanoseconds as microseconds with one decimal: `12.3`.
    static func microseconds(_ nanoseconds: Int) -> String {
        "\(nanoseconds / 1000).\(nanoseconds / 100 % 10)"
    }

    /// A method for a text line: a token as HTTP sends it, anything else (it cannot come from
    /// libmicrohttpd, but the line must not break) as `?`.
    static func textSafe(_ method: String) -> String {
        method.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") } ? method : "?"
    }

    static func appendJSONString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0 ..< 0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
