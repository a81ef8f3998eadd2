import HTTPCore
import HTTPServer
import MenuModel
import MenuService
import MenuSessions
import Metrics
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// menu-server's metrics: what `GET /metrics` reports, with the names and labels of the menu
/// service (the counting itself is the generic ``RequestMetrics`` and the stores' own counts).
///
/// Invariant: the `route` label is a template of ``Endpoint/routes``, `unmatched` (a path no
/// route has) or `rejected` (refused by the HTTP layer before routing): never a raw path or an
/// id, so the series are bounded by the route table. Recording a request (``record(route:status:nanoseconds:)``)
/// takes no lock; everything else is read when scraped.
/// Cost: a request pays ``RequestMetrics/record(route:status:nanoseconds:)``; a scrape O(routes × buckets).
package final class MenuMetrics: Sendable {
    /// The statuses counted beside the classes: not modified, precondition failed, too many
    /// requests, unavailable.
    package static let countedStatuses = [304, 412, 429, 503]
    /// Route labels: the table's templates, then these two.
    package static let routeLabels = Endpoint.routes.map(\.template) + ["unmatched", "rejected"]
    package static var unmatchedRoute: Int { Endpoint.routes.count }
    package static var rejectedRoute: Int { Endpoint.routes.count + 1 }

    package let requests = RequestMetrics(routes: MenuMetrics.routeLabels, countedStatuses: MenuMetrics.countedStatuses)
    private let reloadsSucceeded = Atomic<Int>(0)
    private let reloadsFailed = Atomic<Int>(0)
    /// What a scrape reads beyond the counters: set once the parts exist (``attach(_:)``).
    private let sources = Mutex<Sources?>(nil)
    /// Extra families appended by other parts (the access log's dropped lines), in order.
    private let extras = Mutex<[@Sendable (inout PrometheusText) -> Void]>([])

    /// The parts a scrape asks for their figures.
    package struct Sources: Sendable {
        package var service: MenuAPI
        package var sessions: any SessionBackend
        package var servers: [HTTPServer]
    }

    package init() {}

    package func attach(_ sources: Sources) { self.sources.withLock { $0 = sources } }

    /// Adds families that `write` appends to every scrape.
    package func append(_ write: @escaping @Sendable (inout PrometheusText) -> Void) {
        extras.withLock { $0.append(write) }
    }

    /// Counts one request (`route` an index into ``routeLabels``).
    @inline(__always)
    package func record(route: Int, status: Int, nanoseconds: Int) {
        requests.record(route: route, status: status, nanoseconds: nanoseconds)
    }

    /// Counts a reload that served a new menu or kept the old one (`succeeded` false: the file was refused).
    package func recordReload(succeeded: Bool) {
        if succeeded { reloadsSucceeded.add(1, ordering: .relaxed) } else { reloadsFailed.add(1, ordering: .relaxed) }
    }

    /// `GET /metrics` of this server.
    /// The page holds the metrics weakly: the service it is handed to is among the metrics' sources.
    package var page: MetricsPage {
        MetricsPage(contentType: PrometheusText.contentType) { [weak self] in self?.render() ?? "" }
    }

    /// The whole exposition.
    package func render() -> String {
        var out = PrometheusText()
        writeRequests(to: &out)
        if let sources = sources.withLock({ $0 }) { writeParts(sources, to: &out) }
        out.family(
            "menu_reloads_total", .counter,
            help:
                "Menu reloads (SIGHUP, --watch-config) by outcome: succeeded (served or unchanged) or failed (the file was refused)."
        )
        out.sample("menu_reloads_total", [("outcome", "succeeded")], reloadsSucceeded.load(ordering: .relaxed))
        out.sample("menu_reloads_total", [("outcome", "failed")], reloadsFailed.load(ordering: .relaxed))
        let process = ProcessFigures.now()
        out.family("process_cpu_seconds_total", .counter, help: "User and system CPU time of the process, in seconds.")
        out.sample("process_cpu_seconds_total", [], process.cpuSeconds)
        out.single(
            "process_resident_memory_bytes", .gauge, help: "Resident memory of the process, in bytes.",
            process.residentBytes)
        for write in extras.withLock({ $0 }) { write(&out) }
        return out.text
    }

    private func writeRequests(to out: inout PrometheusText) {
        let figures = requests.snapshot()
        let labels = requests.routes
        out.family(
            "menu_http_requests_total", .counter, help: "HTTP requests answered, by route template and status class.")
        for (route, figure) in zip(labels, figures.routes) {
            for (statusClass, count) in zip(RequestMetrics.statusClasses, figure.classes) where statusClass != "1xx" {
                out.sample("menu_http_requests_total", [("route", route), ("class", statusClass)], count)
            }
        }
        out.family(
            "menu_http_responses_total", .counter,
            help: "HTTP responses with a status watched on its own (304, 412, 429, 503).")
        for (status, count) in zip(requests.countedStatuses, figures.statuses) {
            out.sample("menu_http_responses_total", [("status", String(status))], count)
        }
        out.family(
            "menu_http_request_duration_seconds", .histogram,
            help:
                "Time from the whole request in hand to the response built (the handler, not the socket), by route template."
        )
        let bounds = requests.bucketBounds.map { Double($0) / 1e9 }
        for (route, figure) in zip(labels, figures.routes) {
            out.histogramSeries(
                "menu_http_request_duration_seconds", [("route", route)], bounds: bounds,
                cumulative: figure.cumulativeBuckets, sum: Double(figure.sumNanoseconds) / 1e9)
        }
    }

    private func writeParts(_ sources: Sources, to out: inout PrometheusText) {
        let sessions = sources.sessions.sessionCounts
        out.single(
            "menu_sessions_live", .gauge, help: "Sessions held (expired ones count until a sweep removes them).",
            sessions.held)
        out.single("menu_sessions_created_total", .counter, help: "Sessions created.", sessions.created)
        out.single(
            "menu_sessions_expired_total", .counter,
            help: "Sessions removed by an expiry sweep after their time to live.", sessions.expired)
        out.single(
            "menu_sessions_evicted_total", .counter,
            help: "Idle sessions evicted to make room at --max-sessions or --session-memory.", sessions.evicted)
        out.single(
            "menu_session_bytes", .gauge,
            help:
                "Bytes the sessions held in this process count for against --session-memory (state, history, table places, caches).",
            sessions.bytes)
        if let budget = sessions.memoryBudget {
            out.single(
                "menu_session_memory_budget_bytes", .gauge,
                help: "The session memory budget, --session-memory, in bytes.", budget)
        }
        if let bytes = sessions.storeBytes {
            out.single(
                "menu_session_store_bytes", .gauge,
                help:
                    "Bytes the sessions count for in Redis, across every instance on the prefix, against --session-memory.",
                bytes)
        }
        let waits = sources.service.changeWaits.figures
        out.single(
            "menu_streams_open", .gauge,
            help: "Long polls and event streams of GET /changes open now (--max-streams bounds them together).",
            waits.open)
        out.single(
            "menu_event_streams_open", .gauge, help: "Event streams (text/event-stream) of GET /changes open now.",
            waits.streams)
        out.single(
            "menu_streams_refused_total", .counter,
            help: "Long polls and event streams refused with 503 because --max-streams were open.", waits.refused)
        let store = sources.sessions.storeFigures
        out.single(
            "menu_store_errors_total", .counter,
            help:
                "Session store calls refused as unavailable (disk full or stalled, journal failed, Redis unreachable or too slow): each a 503.",
            store.unavailable)
        out.single(
            "menu_store_durable_waits_total", .counter,
            help: "Session writes that waited for the data directory's journal (--data-dir).", store.durableWrites)
        out.family(
            "menu_store_durable_wait_seconds_total", .counter,
            help: "Time session writes spent waiting for the journal, in seconds.")
        out.sample("menu_store_durable_wait_seconds_total", [], Double(store.durableWaitNanoseconds) / 1e9)
        let slots = sources.service.searchSlots
        out.single(
            "menu_search_builds_running", .gauge,
            help: "Uncached searches (filtered views) being built now, at most --search-builds.", slots.inUse)
        out.single(
            "menu_search_refused_total", .counter,
            help: "Uncached searches refused with 429 busy because --search-builds were running.", slots.refused)
        let menu = sources.service.menu
        out.family("menu_info", .gauge, help: "The menu served: its version as a label, value 1.")
        out.sample("menu_info", [("version", menu.version)], 1)
        out.single("menu_nodes", .gauge, help: "Nodes of the menu served.", menu.nodeCount)
        out.family(
            "menu_http_connections_open", .gauge,
            help: "Client connections libmicrohttpd holds open, idle keep-alive ones included, by listener.")
        for (index, server) in sources.servers.enumerated() {
            out.sample(
                "menu_http_connections_open", [("listener", index == 0 ? "main" : "metrics")], server.openConnections)
        }
    }
}

extension MenuMetrics {
    /// A listener that serves `page` at `GET /metrics` (and `HEAD`) and nothing else (404), on
    /// `address`, with `configuration`'s limits and one thread.
    package static func listener(
        on address: ListenAddress, page: MetricsPage,
        like configuration: HTTPServerConfiguration
    ) throws(HTTPServerError) -> HTTPServer {
        try HTTPServer.sideListener(
            on: address, like: configuration,
            error: { plainError($0, $1, $2, extra: $3.map { (name: $0.0, value: $0.1) }) }
        ) { request in
            guard request.path(is: "/metrics") else {
                return plainError(404, "not_found", "only GET /metrics is served here")
            }
            guard request.method == "GET" || request.method == "HEAD" else {
                return plainError(
                    405, "method_not_allowed", "GET /metrics only", extra: [(name: "Allow", value: "GET, HEAD")])
            }
            return page.response()
        }
    }

    private static func plainError(
        _ status: Int, _ code: String, _ message: String,
        extra: [(name: String, value: String)] = []
    ) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [(name: "Content-Type", value: "application/json")] + extra,
            body: Array("{\"error\":{\"code\":\"\(code)\",\"message\":\"\(message)\"}}".utf8))
    }
}

/// A monotonic clock reading in nanoseconds (`CLOCK_MONOTONIC`, a vDSO call: tens of ns).
@inline(__always)
package func monotonicNanoseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return time.tv_sec * 1_000_000_000 + time.tv_nsec
}
