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
        ) { entries, bytes in
            Self.write(entries, format: format, to: &bytes)
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
}
