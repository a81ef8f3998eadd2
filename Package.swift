// swift-tools-version:6.0
import PackageDescription

/// Every Swift target's settings, applied once at the end of this file.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")
]

let package = Package(
    name: "menu-server",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "MenuModel", targets: ["MenuModel"]),
        .executable(name: "menu-server", targets: ["menu-server"]),
        // The app library: URLSession only, no server target, no C module (scripts/test checks it).
        .library(name: "MenuClient", targets: ["MenuClient"]),
        .executable(name: "menu-client", targets: ["menu-client"]),
        .executable(name: "menu-admin", targets: ["menu-admin"])
    ],
    targets: [
        // Pure model: the immutable menu, its config format, expansion state, the flattened view.
        .target(name: "MenuModel", dependencies: ["TimeZoneRules"]),
        // Availability (sold out, paused, until when) beside the menu, by node id: the overlay the
        // admin API sets and its resolution on one menu. No sessions, no HTTP.
        .target(name: "MenuAvailability", dependencies: ["MenuModel", "TimeZoneRules"]),
        // libmicrohttpd through a system-library target; only HTTPServer imports it.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // Pure HTTP vocabulary: request, response, fields, response body and writer, rejections. No C.
        // Its API stays `public`, not `package`: release builds inline public code across modules, and
        // as `package` GET /rows in MenuService.respond took 700-750 ns instead of 620-630 (menu-bench --handler).
        .target(name: "HTTPCore"),
        // Counters many threads add to and one reads, a block of cells per thread: HTTPServer's
        // connections and requests in flight, Metrics' request counts. Knows no HTTP and no menus.
        .target(name: "ShardedCounters"),
        // The only code that touches libmicrohttpd: request value in, response value out. Knows no menus.
        // Linux epoll and eventfd under fixed names (Glibc's module exports neither).
        .target(name: "CEpoll"),
        .target(name: "HTTPServer", dependencies: ["HTTPCore", "CMicroHTTPD", "CEpoll", "ShardedCounters"]),
        // Generic metrics: request counts and latency histograms, the Prometheus text format.
        .target(name: "Metrics", dependencies: ["ShardedCounters"]),
        // A bounded queue of log entries written to a descriptor by a thread of its own (the access log).
        .target(name: "LineLog"),
        // The UTC offset of an IANA time zone at any instant, read from the machine's TZif files
        // (/usr/share/zoneinfo or $TZDIR): Foundation on Linux answers from ICU's bundled copy instead.
        .target(name: "TimeZoneRules"),
        // Sessions outside the menu: the SessionStore protocol, ids, clock, the in-memory store.
        .target(name: "MenuSessions", dependencies: ["MenuModel"]),
        // hiredis through a system-library target; only RedisClient imports it.
        .systemLibrary(name: "CHiredis", pkgConfig: "hiredis", providers: [.apt(["libhiredis-dev"])]),
        // The Redis connection layer over hiredis: endpoint, connection, per-thread pool, invalidation listener. Knows no menus.
        .target(name: "RedisClient", dependencies: ["CHiredis"]),
        // The embedded durable store: journal + snapshot in a data directory.
        .target(name: "MenuSessionsDurable", dependencies: ["MenuModel", "MenuSessions"]),
        // Sessions in Redis shared by every instance, with a client-side cache Redis invalidates.
        .target(name: "MenuSessionsRedis", dependencies: ["MenuModel", "MenuSessions", "RedisClient"]),
        // The browser page (GET /): its HTML, JS and CSS compiled into the binary as byte arrays.
        .target(
            name: "WebAssets", path: "Web",
            resources: [
                .embedInCode("index.html"), .embedInCode("texts.js"), .embedInCode("cells.js"),
                .embedInCode("session.js"),
                .embedInCode("search.js"), .embedInCode("app.js"),
                .embedInCode("app.css")
            ]),
        // Nettle (SHA-256) through a system-library target; only AdminAccess imports it.
        .systemLibrary(name: "CNettle", pkgConfig: "nettle", providers: [.apt(["nettle-dev"])]),
        // Who may use the admin API: bearer tokens from a file, kept as digests. Knows no menus.
        .target(name: "AdminAccess", dependencies: ["CNettle"]),
        // The API: request value in, response value out (routing, JSON). No C, no concrete store, no files.
        .target(
            name: "MenuService",
            dependencies: ["MenuModel", "MenuSessions", "HTTPCore", "WebAssets", "MenuAvailability"]),
        // The composition root as a library: settings, store choice, reload, start and stop.
        .target(
            name: "MenuApp",
            dependencies: [
                "MenuModel", "MenuSessions", "MenuSessionsDurable", "MenuService", "HTTPCore", "HTTPServer", "Metrics",
                "LineLog",
                "RedisClient", "MenuSessionsRedis", "AdminAccess", "MenuAvailability"
            ]),
        .executableTarget(name: "menu-server", dependencies: ["MenuApp"]),
        // The client library for apps and tools: Foundation (FoundationNetworking on Linux) and
        // Synchronization only; it must never depend on a server target or a C module.
        .target(name: "MenuClient"),
        // The terminal app over MenuClient: screen model, keys, rows drawn, frame diff, raw mode (Glibc).
        .target(name: "MenuTerminal", dependencies: ["MenuClient"]),
        // `menu-client [URL]`: the Sichuan restaurant's ordering app in a terminal; main.swift only.
        .executableTarget(name: "menu-client", dependencies: ["MenuClient", "MenuTerminal"]),
        // `menu-admin`: the admin API from a terminal (sold out, paused, available, list, reload); Foundation only.
        .executableTarget(name: "menu-admin"),
        // The seeds' naive design (mutable tree, recursive walks) as a reference for tests and benchmarks.
        .target(name: "NaiveReference", dependencies: ["MenuModel"]),
        // `swift run -c release menu-bench`: the model against the naive reference on synthetic menus.
        .executableTarget(
            name: "menu-bench",
            dependencies: [
                "MenuModel", "MenuSessions", "MenuService", "MenuApp", "HTTPCore", "HTTPServer", "NaiveReference",
                "ChildProcess", "MenuAvailability"
            ]),
        // libFuzzer targets for the config loader, routing/query parsing and the PUT body (scripts/fuzz).
        .target(
            name: "FuzzTargets",
            dependencies: [
                "MenuModel", "MenuSessionsDurable", "MenuService", "HTTPCore", "HTTPServer", "AdminAccess",
                "MenuAvailability"
            ]),
        .executableTarget(name: "menu-fuzz", dependencies: ["FuzzTargets"]),
        // Child processes over posix_spawn (Foundation's Process crashes with many descriptors open on Linux).
        .target(name: "CSpawn"),
        .target(name: "ChildProcess", dependencies: ["CSpawn"]),
        // Test support only: a raw HTTP/1.1 client over a POSIX socket, shared by the test targets.
        .target(name: "HTTPTestSupport"),
        // Test support only: the tests' paths, menus and manual clock (MenuTestSupport), the service called
        // with request values (MenuServiceTestSupport), the durable store's fixtures (DurableTestSupport).
        .target(name: "MenuTestSupport", dependencies: ["MenuModel", "MenuSessions", "NaiveReference"]),
        .target(
            name: "MenuServiceTestSupport", dependencies: ["MenuService", "MenuSessions", "HTTPCore", "MenuTestSupport"]
        ),
        // Test support only: nginx (Debian's) in front of menu-server instances, round-robin (issue 16).
        .target(name: "NginxTestSupport", dependencies: ["ChildProcess", "HTTPTestSupport"]),
        .target(
            name: "DurableTestSupport", dependencies: ["MenuSessionsDurable", "MenuSessions", "MenuModel"]),
        // Test support only: a real redis-server started through ChildProcess on a free port or a unix socket.
        .target(name: "RedisTestSupport", dependencies: ["RedisClient", "ChildProcess", "HTTPTestSupport"]),
        // Test support only: the app tests' harness: the live-server launcher, the contract transports, the
        // menu-server child-process launcher and the decoder of the wire format.
        .target(
            name: "MenuAppTestSupport",
            dependencies: [
                "MenuApp", "MenuService", "MenuModel", "HTTPCore", "MenuTestSupport", "HTTPTestSupport",
                "DurableTestSupport",
                "ChildProcess", "NaiveReference", "RedisClient"
            ]),

        .testTarget(name: "MenuModelTests", dependencies: ["MenuModel", "NaiveReference", "TimeZoneRules"]),
        .testTarget(name: "AdminAccessTests", dependencies: ["AdminAccess"]),
        .testTarget(name: "MetricsTests", dependencies: ["Metrics", "LineLog", "ShardedCounters"]),
        .testTarget(name: "ChildProcessTests", dependencies: ["ChildProcess"]),
        .testTarget(
            name: "HTTPServerTests", dependencies: ["HTTPCore", "HTTPServer", "HTTPTestSupport", "ShardedCounters"]),
        .testTarget(
            name: "MenuSessionsTests", dependencies: ["MenuSessions", "MenuModel", "MenuTestSupport", "NaiveReference"]),
        // The Redis store: its record and cache alone, then against a real redis-server.
        .testTarget(
            name: "MenuSessionsRedisTests",
            dependencies: [
                "MenuSessionsRedis", "MenuSessions", "MenuModel", "RedisClient", "RedisTestSupport", "MenuTestSupport",
                "HTTPTestSupport",
                "NaiveReference"
            ]),
        // One body of store-contract tests run against the in-memory, durable and Redis stores.
        .testTarget(
            name: "SessionStoreConformanceTests",
            dependencies: [
                "MenuSessions", "MenuSessionsDurable", "MenuSessionsRedis", "MenuModel", "RedisClient",
                "DurableTestSupport",
                "RedisTestSupport", "HTTPTestSupport", "MenuTestSupport", "NaiveReference"
            ]),
        // The store directly and the built menu-server over its data directory; MenuService for a full disk's 503.
        .testTarget(
            name: "MenuSessionsDurableTests",
            dependencies: [
                "MenuSessionsDurable", "MenuSessions", "MenuModel", "MenuService", "HTTPCore", "DurableTestSupport",
                "MenuTestSupport", "MenuServiceTestSupport", "HTTPTestSupport", "ChildProcess", "NaiveReference",
                "MenuAppTestSupport"
            ]),
        // In-process: request values to MenuService, no socket; the fuzz corpus through FuzzTargets.
        .testTarget(
            name: "MenuServiceTests",
            dependencies: [
                "MenuService", "MenuModel", "MenuSessions", "HTTPCore", "MenuServiceTestSupport", "MenuTestSupport",
                "NaiveReference", "FuzzTargets", "MenuSessionsDurable", "DurableTestSupport", "MenuSessionsRedis",
                "RedisClient",
                "RedisTestSupport", "HTTPTestSupport", "MenuAppTestSupport", "MenuAvailability"
            ]),
        // Live: RunningServer started in-process on port 0, the menu-server process, hostile clients, settings.
        .testTarget(
            name: "MenuAppTests",
            dependencies: [
                "MenuApp", "MenuService", "MenuModel", "MenuSessions", "MenuSessionsDurable", "HTTPCore", "HTTPServer",
                "Metrics", "HTTPTestSupport", "MenuServiceTestSupport", "MenuTestSupport", "DurableTestSupport",
                "NaiveReference",
                "ChildProcess", "NginxTestSupport", "RedisClient", "MenuSessionsRedis", "RedisTestSupport",
                "MenuAppTestSupport", "AdminAccess"
            ]),
        // MenuClient against the real server started in-process (and the menu-server process).
        .testTarget(
            name: "MenuClientTests",
            dependencies: [
                "MenuClient", "MenuApp", "MenuModel", "MenuTestSupport", "HTTPTestSupport", "ChildProcess",
                "MenuService", "MenuSessions", "HTTPServer", "HTTPCore", "MenuAppTestSupport", "RedisTestSupport",
                "RedisClient", "MenuAvailability"
            ]),
        // The terminal app: keys, widths, rows, frame diff in-process; menu-client in tmux against the built menu-server.
        .testTarget(
            name: "MenuTerminalTests",
            dependencies: [
                "MenuTerminal", "MenuClient", "MenuTestSupport", "NaiveReference", "ChildProcess", "HTTPTestSupport",
                "MenuAppTestSupport"
            ]),
        .testTarget(
            name: "MenuAvailabilityTests",
            dependencies: ["MenuAvailability", "MenuModel", "NaiveReference", "TimeZoneRules"]),
        // RedisClient against real redis-server processes (RedisTestSupport).
        .testTarget(
            name: "RedisClientTests", dependencies: ["RedisClient", "RedisTestSupport", "HTTPTestSupport"]),
        // TZif and POSIX TZ parsing against hand-worked instants and Foundation's TimeZone; hostile files.
        .testTarget(name: "TimeZoneRulesTests", dependencies: ["TimeZoneRules"])
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system && target.type != .binary && target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + strict
}
