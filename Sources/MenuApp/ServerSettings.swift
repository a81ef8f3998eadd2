import HTTPCore
import HTTPServer
import MenuService
import MenuSessions
import MenuSessionsDurable
import MenuSessionsRedis
import RedisClient

/// Everything `menu-server` is told at start-up: flag, then environment variable, then default.
/// Built once, then read-only.
///
/// One source for each default and range: the HTTP listener's come from ``HTTPServerConfiguration``
/// (its property defaults and ``HTTPServerConfiguration/ValidRange``), the page size's from
/// ``MenuAPI``, the sessions' and the store's are stated here once (the property and its
/// ``options`` line); `--help` and the errors print the numbers they read.
package struct ServerSettings: Sendable, Equatable {
    /// The listener's defaults, read by the properties below.
    private static let http = HTTPServerConfiguration()

    package var configPath = "Config/menu.json"
    package var host = http.host
    package var port = http.port
    /// libmicrohttpd threads (poll mode). 2 served best on a 2-core machine (docs/performance.md, design choices).
    package var threads = http.threads
    package var maxLimit = MenuAPI.defaultMaxLimit
    /// Search cache misses (filtered views) built at once; a miss past it is 503 busy.
    package var searchBuilds = MenuAPI.defaultSearchBuilds
    /// Long polls (`GET /changes?wait=`) and event streams held at once (`--max-streams`); past it, 503.
    package var maxStreams = MenuAPI.defaultMaxStreams
    /// Seconds between an event stream's heartbeat comments (`--stream-heartbeat`).
    package var streamHeartbeatSeconds = Int(MenuAPI.defaultStreamHeartbeat.components.seconds)
    /// Seconds after a reload that its feed entries can be read (`--reload-entry-window`).
    package var reloadEntryWindowSeconds = Int(MenuAPI.defaultReloadEntryWindow.components.seconds)
    package var maxSessions = SessionLimits.defaults.maxSessions
    package var sessionTTLSeconds = Int(SessionLimits.defaults.timeToLive.components.seconds)
    /// Idle seconds after which a session may be evicted (least recently used first) for a new one
    /// when `maxSessions` are held.
    package var sessionEvictIdleSeconds = Int(SessionLimits.defaults.evictionIdle.components.seconds)
    /// Groups one session may hold changed from the menu's default; past it, 409 too_many_changes.
    package var maxChangedGroups = SessionLimits.defaults.maxChangedGroups
    /// Splices each session keeps for `GET /changes`; an older `since` is 410 gone.
    package var changeHistory = SessionLimits.defaults.changeHistory
    /// Memory all sessions together may take, in this process and (Redis store) in Redis across the
    /// prefix (`--session-memory`); one session a 64th of it.
    package var sessionMemory = SessionLimits.defaults.sessionMemory
    /// Sessions one client address may create a minute (a token bucket); 0: no limit.
    package var sessionRatePerMinute = 0
    /// The proxy whose `X-Forwarded-For` names the client for `sessionRatePerMinute`.
    package var trustedProxy: IPAddress?
    package var maxConnections = http.connectionLimit
    package var perIPConnections = http.perIPConnectionLimit
    package var connectionTimeoutSeconds = http.connectionTimeoutSeconds
    /// Seconds a request's line and headers may take, and then its body, however slowly they trickle in.
    package var headerTimeoutSeconds = http.headerTimeoutSeconds
    /// Bytes libmicrohttpd may use per connection for the request line, headers and buffers;
    /// larger headers or URLs get 431/414 (or a closed connection).
    package var connectionMemoryLimit = http.connectionMemoryLimit
    package var listenBacklog = http.listenBacklog
    /// Where sessions are kept on disk; nil keeps them in memory only.
    package var dataDirectory: String?
    /// Where sessions are kept besides `dataDirectory`: this process's memory, or a Redis server
    /// that several instances share (`--store`).
    package var store = SessionStoreChoice.memory
    /// What every Redis key of the store starts with (several deployments may share one Redis).
    package var redisPrefix = RedisStoreOptions().prefix
    /// Milliseconds a Redis connect or command may take before the request answers 503.
    package var redisTimeoutMilliseconds = Int(RedisOptions().timeout / .milliseconds(1))
    /// Keep the sessions read in this process, invalidated by Redis (client-side caching).
    package var redisCache = true
    /// `--redis-pipeline`: writes go out without holding their HTTP thread, batched with others.
    package var redisPipeline = true
    /// `--redis-cache-max-age`: seconds a cached session is served before Redis confirms it again.
    package var redisCacheMaxAgeSeconds = Int(RedisStoreOptions().cacheMaxAge / .seconds(1))
    /// When the session journal is flushed to disk (with a data directory).
    package var fsync = FsyncPolicy.everysec
    /// Seconds a session write may wait for the disk (with a data directory) before it answers 503.
    package var storeTimeoutSeconds = 2
    /// Reload the menu when the config file changes (as on SIGHUP), not only on SIGHUP.
    package var watchConfig = false
    /// Where `GET /metrics` is served on a listener of its own; nil: on the main port.
    package var metricsListen: ListenAddress?
    /// Where the admin API listens (`--admin-listen`); nil: no admin API.
    package var adminListen: ListenAddress?
    /// The admin API's bearer tokens, one a line (`--admin-token-file`).
    package var adminTokenFile: String?
    /// How log lines look on standard error.
    package var logFormat = LogFormat.text
    /// Lines below this level are not written; request lines are `info`.
    package var logLevel = LogLevel.info
    /// No request lines (events are still logged).
    package var quiet = false
    /// The other origins a browser may call the API from (`--cors-origin`, each checked), `*` for
    /// reads from any origin; empty: none.
    package var corsOrigins: [String] = []

    /// The policy ``corsOrigins`` name; nil when they name none.
    package var crossOriginPolicy: CrossOriginPolicy? {
        corsOrigins.isEmpty ? nil : try? CrossOriginPolicy(origins: corsOrigins)
    }

    package init() {}

    /// The session limits these settings name, as both stores take them.
    package var sessionLimits: SessionLimits {
        SessionLimits(
            maxSessions: maxSessions, timeToLive: .seconds(sessionTTLSeconds),
            evictionIdle: .seconds(sessionEvictIdleSeconds), maxChangedGroups: maxChangedGroups,
            changeHistory: changeHistory, sessionMemory: sessionMemory)
    }

    /// One settable option: its flag, environment variable, help text (ending in its default) and
    /// how it is applied.
    struct Option: Sendable {
        let flag: String
        let environment: String
        let placeholder: String
        let help: String
        /// For an integer option, the values it accepts and the field it sets; nil for the others.
        let integer: IntegerField?
        /// A flag without a value (`--quiet` means `yes`); its variable still takes `yes` or `no`.
        var isSwitch = false
        let apply: @Sendable (inout ServerSettings, String) throws(SettingsError) -> Void
        /// For an option that may be given more than once (each adds to the value): empties the
        /// value before the first flag, so the flags replace the environment variable's value.
        var reset: (@Sendable (inout ServerSettings) -> Void)? = nil
    }

    /// What an integer option accepts and where it puts the value.
    struct IntegerField: Sendable {
        let range: ClosedRange<Int>
        let field: any WritableKeyPath<ServerSettings, Int> & Sendable
    }

    private static let defaults = ServerSettings()
    private typealias Range = HTTPServerConfiguration.ValidRange

    static let options: [Option] = [
        text("--config", "MENU_CONFIG", "PATH", "menu config JSON", shown: defaults.configPath) {
            s, v throws(SettingsError) in
            guard !v.isEmpty else { throw .invalidValue(source: "--config", value: v, expected: "a file path") }
            s.configPath = v
        },
        text("--host", "MENU_HOST", "ADDR", "IP address to listen on; 0.0.0.0 or :: for all", shown: defaults.host) {
            s, v throws(SettingsError) in
            guard !v.isEmpty else {
                throw .invalidValue(source: "--host", value: v, expected: "an IPv4 or IPv6 address")
            }
            s.host = v
        },
        integer("--port", "MENU_PORT", "port to listen on; 0 picks a free one", Range.port, \.port),
        integer("--threads", "MENU_THREADS", "HTTP threads", Range.threads, \.threads),
        integer(
            "--max-limit", "MENU_MAX_LIMIT", "largest page a client may ask for", MenuAPI.maxLimitRange, \.maxLimit),
        integer(
            "--search-builds", "MENU_SEARCH_BUILDS",
            "uncached searches (filtered views) built at once; another is 429 busy with Retry-After", 1 ... 1024,
            \.searchBuilds),
        integer(
            "--max-streams", "MENU_MAX_STREAMS",
            "long polls (GET /changes?wait=) and event streams held at once, each holding a connection but no thread; then 503 with Retry-After",
            0 ... 1_000_000, \.maxStreams),
        integer(
            "--stream-heartbeat", "MENU_STREAM_HEARTBEAT",
            "seconds between an event stream's heartbeat comments: below every proxy's read timeout on the way; each also looks for news missed and finds clients gone",
            1 ... 300, \.streamHeartbeatSeconds),
        integer(
            "--reload-entry-window", "MENU_RELOAD_ENTRY_WINDOW",
            "seconds after a menu reload that sessions can read it as an entry of their changes feed (its splices), the previous menu kept that long; 0 = no entries, clients re-read their rows",
            0 ... 86400, \.reloadEntryWindowSeconds),
        integer(
            "--max-sessions", "MENU_MAX_SESSIONS", "sessions held at most; then eviction or 429", 1 ... 100_000_000,
            \.maxSessions),
        integer(
            "--session-ttl", "MENU_SESSION_TTL", "seconds a session may stay idle before it expires",
            1 ... 10 * 365 * 86400, \.sessionTTLSeconds),
        integer(
            "--session-evict-idle", "MENU_SESSION_EVICT_IDLE",
            "seconds idle after which, at --max-sessions, the least recently used session is evicted for a new one",
            0 ... 10 * 365 * 86400, \.sessionEvictIdleSeconds),
        integer(
            "--max-changed-groups", "MENU_MAX_CHANGED_GROUPS",
            "groups one session may change from the default; then 409", 1 ... 100_000_000, \.maxChangedGroups),
        integer(
            "--change-history", "MENU_CHANGE_HISTORY",
            "splices each session keeps for GET /changes (12 bytes each); an older since is 410",
            SessionLimits.changeHistoryRange, \.changeHistory),
        size(
            "--session-memory", "MENU_SESSION_MEMORY",
            "memory all sessions may take (K, M, G, T: binary units): in this process, and in Redis across the prefix with --store redis://; then the least recently used idle ones are evicted, else 429; one session may hold a 64th of it (at most 16M), else 409",
            SessionLimits.sessionMemoryRange, \.sessionMemory),
        integer(
            "--session-rate", "MENU_SESSION_RATE",
            "sessions one client address may create a minute; then 429; 0 = no limit", 0 ... 1_000_000,
            \.sessionRatePerMinute),
        text(
            "--trusted-proxy", "MENU_TRUSTED_PROXY", "ADDR",
            "the proxy whose X-Forwarded-For names the client for --session-rate", shown: "none"
        ) { s, v throws(SettingsError) in
            guard let address = IPAddress(v) else {
                throw .invalidValue(source: "--trusted-proxy", value: v, expected: "an IPv4 or IPv6 address")
            }
            s.trustedProxy = address
        },
        integer(
            "--max-connections", "MENU_MAX_CONNECTIONS", "open connections at most", Range.connectionLimit,
            \.maxConnections),
        integer(
            "--per-ip-connections", "MENU_PER_IP_CONNECTIONS", "open connections per client IP; 0 = no limit",
            Range.perIPConnectionLimit, \.perIPConnections),
        integer(
            "--connection-timeout", "MENU_CONNECTION_TIMEOUT", "seconds an idle connection is kept",
            Range.connectionTimeoutSeconds, \.connectionTimeoutSeconds),
        integer(
            "--header-timeout", "MENU_HEADER_TIMEOUT",
            "seconds a request's line and headers may take, and then its body, however slowly they arrive",
            Range.headerTimeoutSeconds, \.headerTimeoutSeconds),
        integer(
            "--connection-memory", "MENU_CONNECTION_MEMORY",
            "bytes per connection for request line and headers; more gets 431/414", Range.connectionMemoryLimit,
            \.connectionMemoryLimit),
        integer(
            "--listen-backlog", "MENU_LISTEN_BACKLOG", "pending connections the kernel queues", Range.listenBacklog,
            \.listenBacklog),
        text(
            "--data-dir", "MENU_DATA_DIR", "DIR",
            "keep sessions on disk in DIR, an existing directory; none keeps them in memory only", shown: "none"
        ) { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw .invalidValue(source: "--data-dir", value: v, expected: "a directory path") }
            s.dataDirectory = v
        },
        text(
            "--store", "MENU_STORE", "STORE",
            "memory, or redis://[:PASSWORD@]HOST:PORT[/DB] or redis+unix:///PATH[?db=N]: keep sessions in that Redis, shared by every instance on it (not with --data-dir)",
            shown: "memory"
        ) { s, v throws(SettingsError) in
            guard v != "memory" else { return s.store = .memory }
            do throws(RedisEndpointError) { s.store = .redis(try RedisEndpoint(parsing: v)) } catch {
                throw .invalidURL(source: "--store", error.description)
            }
        },
        text(
            "--redis-prefix", "MENU_REDIS_PREFIX", "PREFIX", "what every Redis key of the store starts with",
            shown: defaults.redisPrefix
        ) { s, v throws(SettingsError) in
            guard !v.isEmpty,
                !v.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F })
            else {
                throw .invalidValue(
                    source: "--redis-prefix", value: v,
                    expected:
                        "a non-empty key prefix without spaces or control characters, such as menu: or shop1:menu:")
            }
            s.redisPrefix = v
        },
        integer(
            "--redis-timeout", "MENU_REDIS_TIMEOUT",
            "milliseconds a Redis connect or command may take; then the request answers 503", 1 ... 60_000,
            \.redisTimeoutMilliseconds),
        text(
            "--redis-cache", "MENU_REDIS_CACHE", "on|off",
            "keep sessions read from Redis in memory, invalidated by Redis when another instance writes them",
            shown: "on"
        ) { s, v throws(SettingsError) in
            switch v {
            case "on": s.redisCache = true
            case "off": s.redisCache = false
            default: throw .invalidValue(source: "--redis-cache", value: v, expected: "on or off")
            }
        },
        text(
            "--redis-pipeline", "MENU_REDIS_PIPELINE", "on|off",
            "send writes to Redis without holding an HTTP thread for the round trip, batched with the writes of other requests",
            shown: "on"
        ) { s, v throws(SettingsError) in
            switch v {
            case "on": s.redisPipeline = true
            case "off": s.redisPipeline = false
            default: throw .invalidValue(source: "--redis-pipeline", value: v, expected: "on or off")
            }
        },
        integer(
            "--redis-cache-max-age", "MENU_REDIS_CACHE_MAX_AGE",
            "seconds a cached session is served before it is read from Redis again: how long a copy could be stale should Redis drop the connection tracking it unnoticed",
            1 ... 86_400, \.redisCacheMaxAgeSeconds),
        text(
            "--fsync", "MENU_FSYNC", "POLICY", "always|everysec|no: when session changes are flushed to disk",
            shown: defaults.fsync.rawValue
        ) { s, v throws(SettingsError) in
            guard let policy = FsyncPolicy(rawValue: v) else {
                throw .invalidValue(source: "--fsync", value: v, expected: "always, everysec or no")
            }
            s.fsync = policy
        },
        text(
            "--watch-config", "MENU_WATCH_CONFIG", "yes|no",
            "also reload the menu when the --config file changes, as on SIGHUP", shown: "no"
        ) { s, v throws(SettingsError) in
            switch v {
            case "yes": s.watchConfig = true
            case "no": s.watchConfig = false
            default: throw .invalidValue(source: "--watch-config", value: v, expected: "yes or no")
            }
        },
        integer(
            "--store-timeout", "MENU_STORE_TIMEOUT",
            "seconds a session write may wait for the disk before it answers 503", 1 ... 3600, \.storeTimeoutSeconds),
        listener(
            "--metrics-listen", "MENU_METRICS_LISTEN",
            "serve GET /metrics on a listener of its own at this address instead of on the main port",
            example: "[::1]:9090 for IPv6", \.metricsListen),
        listener(
            "--admin-listen", "MENU_ADMIN_LISTEN",
            "serve the admin API (/admin/...) on a listener of its own at this address; needs --admin-token-file",
            example: "127.0.0.1:9091", \.adminListen),
        text(
            "--admin-token-file", "MENU_ADMIN_TOKEN_FILE", "PATH",
            "the admin API's bearer tokens, one a line (16-512 bytes each; re-read when the file changes)",
            shown: "none"
        ) { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw .invalidValue(source: "--admin-token-file", value: v, expected: "a path") }
            s.adminTokenFile = v
        },
        text(
            "--log-format", "MENU_LOG_FORMAT", "FORMAT", "text|json: how log lines on standard error look",
            shown: defaults.logFormat.rawValue
        ) { s, v throws(SettingsError) in
            guard let format = LogFormat(rawValue: v) else {
                throw .invalidValue(source: "--log-format", value: v, expected: "text or json")
            }
            s.logFormat = format
        },
        text(
            "--log-level", "MENU_LOG_LEVEL", "LEVEL",
            "debug|info|warn|error: the least severe lines written (requests are info)",
            shown: defaults.logLevel.rawValue
        ) { s, v throws(SettingsError) in
            guard let level = LogLevel(rawValue: v) else {
                throw .invalidValue(source: "--log-level", value: v, expected: "debug, info, warn or error")
            }
            s.logLevel = level
        },
        Option(
            flag: "--quiet", environment: "MENU_QUIET", placeholder: "",
            help: "no line per request (MENU_QUIET=yes|no) (default no)", integer: nil,
            isSwitch: true
        ) { s, v throws(SettingsError) in
            switch v {
            case "yes": s.quiet = true
            case "no": s.quiet = false
            default: throw .invalidValue(source: "--quiet", value: v, expected: "yes or no")
            }
        },
        corsOrigin
    ]

    /// `--cors-origin`: repeatable, each value one origin or several separated by commas (as the
    /// environment variable takes them); `*` lets any origin read.
    private static let corsOrigin: Option = {
        var option = text(
            "--cors-origin", "MENU_CORS_ORIGIN", "ORIGIN",
            "let a web app on ORIGIN (scheme://host[:port]) call the API from a browser; repeatable or comma-separated; * lets any origin read (GET, HEAD) but not write",
            shown: "none"
        ) { s, v throws(SettingsError) in
            let values = v.split(separator: ",").map(CrossOriginPolicy.trimmed).filter { !$0.isEmpty }
            guard !values.isEmpty else {
                throw .invalidValue(
                    source: "--cors-origin", value: v, expected: "an origin such as http://localhost:3000, or *")
            }
            for value in values {
                do throws(CrossOriginPolicyError) {
                    if value != "*" { _ = try CrossOriginPolicy.serializedOrigin(value) }
                } catch {
                    throw .invalidValue(
                        source: "--cors-origin", value: value,
                        expected: "an origin, scheme://host[:port] (\(error.reason))")
                }
                if !s.corsOrigins.contains(value) { s.corsOrigins.append(value) }
            }
        }
        option.reset = { $0.corsOrigins = [] }
        return option
    }()

    /// An option whose value is text; `shown` is its default as `--help` prints it.
    private static func text(
        _ flag: String, _ environment: String, _ placeholder: String, _ help: String, shown: String,
        _ apply: @escaping @Sendable (inout ServerSettings, String) throws(SettingsError) -> Void
    ) -> Option {
        Option(
            flag: flag, environment: environment, placeholder: placeholder, help: help + " (default \(shown))",
            integer: nil, apply: apply)
    }

    /// A listener's address (``ListenAddress``), off unless given.
    private static func listener(
        _ flag: String, _ environment: String, _ help: String, example: String,
        _ field: any WritableKeyPath<ServerSettings, ListenAddress?> & Sendable
    ) -> Option {
        text(flag, environment, "ADDR:PORT", help, shown: "none") { settings, text throws(SettingsError) in
            guard let address = ListenAddress(text) else {
                throw .invalidValue(
                    source: flag, value: text,
                    expected: "ADDR:PORT, an IP address and a port from 0 to 65535 (\(example))")
            }
            settings[keyPath: field] = address
        }
    }

    /// An integer option: decimal digits only, within `range`; its help ends in the field's default.
    private static func integer(
        _ flag: String, _ environment: String, _ help: String, _ range: ClosedRange<Int>,
        _ field: any WritableKeyPath<ServerSettings, Int> & Sendable
    ) -> Option {
        let value = defaults[keyPath: field]
        let days = value >= 86400 && value % 86400 == 0 ? ", \(value / 86400) days" : ""
        return Option(
            flag: flag, environment: environment, placeholder: "N", help: help + " (default \(value)\(days))",
            integer: IntegerField(range: range, field: field)
        ) { settings, text throws(SettingsError) in
            guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let value = Int(text), range.contains(value)
            else {
                throw .invalidValue(
                    source: flag, value: text, expected: "an integer from \(range.lowerBound) to \(range.upperBound)")
            }
            settings[keyPath: field] = value
        }
    }

    /// A byte-size option: decimal digits, optionally followed by `K`, `M`, `G` or `T` (powers of
    /// 1024), within `range`; its help ends in the field's default, written the same way.
    private static func size(
        _ flag: String, _ environment: String, _ help: String, _ range: ClosedRange<Int>,
        _ field: any WritableKeyPath<ServerSettings, Int> & Sendable
    ) -> Option {
        Option(
            flag: flag, environment: environment, placeholder: "SIZE",
            help: help + " (default \(ByteSize.text(of: defaults[keyPath: field])))",
            integer: nil
        ) { settings, text throws(SettingsError) in
            guard let value = ByteSize.parse(text), range.contains(value) else {
                throw .invalidValue(
                    source: flag, value: text,
                    expected:
                        "a size from \(ByteSize.text(of: range.lowerBound)) to \(ByteSize.text(of: range.upperBound)): digits, optionally followed by K, M, G or T (such as 256M)"
                )
            }
            settings[keyPath: field] = value
        }
    }

    /// What the command line asks for.
    package enum Command: Sendable, Equatable {
        case run(ServerSettings)
        /// `menu-server healthcheck [options]`: ask the server these settings describe for
        /// `GET /healthz` and exit 0 or 1 (``HealthProbe``).
        case healthCheck(ServerSettings)
        case help
        case version
    }

    /// Parses flags (`--flag value` or `--flag=value`) over environment variables over defaults.
    package static func parse(arguments: [String], environment: [String: String]) throws(SettingsError) -> Command {
        if arguments.first == "healthcheck" {
            switch try parse(arguments: Array(arguments.dropFirst()), environment: environment) {
            case .run(let settings): return .healthCheck(settings)
            case let other: return other
            }
        }
        var settings = ServerSettings()
        for option in options {
            if let value = environment[option.environment] {
                do {
                    try option.apply(&settings, value)
                } catch .invalidValue(_, let value, let expected) {
                    throw .invalidValue(source: option.environment, value: value, expected: expected)
                } catch .invalidURL(_, let problem) {
                    throw .invalidURL(source: option.environment, problem)
                } catch {
                    throw error
                }
            }
        }
        var index = 0
        var repeated: Set<String> = []  // the flags given so far
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" { return .help }
            if argument == "--version" { return .version }
            // `--flag=value` (the value may be empty, which the option then refuses) or `--flag value`.
            let equals = argument.firstIndex(of: "=")
            let flag = equals.map { String(argument[..<$0]) } ?? argument
            let inline = equals.map { String(argument[argument.index(after: $0)...]) }
            guard let option = options.first(where: { $0.flag == flag }) else { throw .unknownFlag(argument) }
            if let reset = option.reset, !repeated.contains(flag) { reset(&settings) }
            repeated.insert(flag)
            let value: String
            if let inline {
                value = inline
            } else if option.isSwitch {
                value = "yes"
            } else {
                guard index < arguments.count else { throw .missingValue(flag: flag) }
                value = arguments[index]
                index += 1
            }
            try option.apply(&settings, value)
        }
        try settings.checkStoreChoice()
        try settings.checkAdmin()
        return .run(settings)
    }

    package static var usage: String {
        var lines = [
            "usage: menu-server [options]", "",
            "Serves a tree-shaped menu as a flat, expandable table of rows over HTTP.", "",
            "options (each also an environment variable; the flag wins):"
        ]
        for option in options {
            let left = "  \(option.flag) \(option.placeholder)"
            lines.append(left.padding(toLength: 30) + option.help + "  [\(option.environment)]")
        }
        lines.append("  --help".padding(toLength: 30) + "print this help")
        lines.append("  --version".padding(toLength: 30) + "print the version")
        lines.append("")
        lines.append(
            "menu-server healthcheck [options]: GET /healthz of the server the same options and variables describe")
        lines.append("(a wildcard --host is asked on loopback); exits 0 when it answers 200 within 2 s, 1 otherwise.")
        return lines.joined(separator: "\n")
    }

    package static let version = "menu-server 0.1.0"
}

/// An IP address literal and a port, written `ADDR:PORT` (`[ADDR]:PORT` for IPv6).
///
/// Invariant: `host` is an IPv4 or IPv6 literal (without brackets), `port` in 0...65535.
package struct ListenAddress: Sendable, Equatable {
    package var host: String
    package var port: Int

    package init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        let port = text[text.index(after: colon)...]
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard IPAddress(host) != nil, !port.isEmpty,
            port.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let number = Int(port), HTTPServerConfiguration.ValidRange.port.contains(number)
        else { return nil }
        self.host = host
        self.port = number
    }
}

/// Why the command line or environment was refused; the message names the flag and value.
package enum SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownFlag(String)
    case missingValue(flag: String)
    /// `source` is the flag or environment variable that carried the value.
    case invalidValue(source: String, value: String, expected: String)
    /// A URL that does not parse; `problem` says why, and shows the URL without its password.
    case invalidURL(source: String, String)
    /// Two options that exclude each other were both given.
    case conflicting(String, String, reason: String)
    /// An option given without another it needs.
    case requires(String, String, reason: String)

    package var description: String {
        switch self {
        case .unknownFlag(let flag): "unknown option \(flag); see --help"
        case .missingValue(let flag): "\(flag) needs a value; see --help"
        case .invalidValue(let source, let value, let expected):
            "invalid value \"\(value)\" for \(source): expected \(expected)"
        case .invalidURL(let source, let problem): "\(source): \(problem)"
        case .conflicting(let first, let second, let reason):
            "\(first) and \(second) cannot be used together: \(reason)"
        case .requires(let first, let second, let reason): "\(first) needs \(second): \(reason)"
        }
    }
}

extension String {
    fileprivate func padding(toLength length: Int) -> String {
        count >= length ? self + " " : self + String(repeating: " ", count: length - count)
    }
}
