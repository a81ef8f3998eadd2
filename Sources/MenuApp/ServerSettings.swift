import HTTPCore
import HTTPServer
import MenuService
import MenuSessionsDurable

/// Everything `menu-server` is told at start-up: flag, then environment variable, then default.
/// Built once, then read-only.
public struct ServerSettings: Sendable, Equatable {
    public var configPath = "Config/menu.json"
    public var host = "127.0.0.1"
    public var port = 8080
    /// libmicrohttpd threads (poll mode). 2 served best on a 2-core machine (BENCHMARKS.md).
    public var threads = 2
    public var maxLimit = 500
    public var maxSessions = 1_000_000
    public var sessionTTLSeconds = 30 * 24 * 3600
    /// Idle seconds after which a session may be evicted (least recently used first) for a new one
    /// when `maxSessions` are held.
    public var sessionEvictIdleSeconds = 3600
    /// Groups one session may hold changed from the menu's default; past it, 409 too_many_changes.
    public var maxChangedGroups = 10_000
    /// Sessions one client address may create a minute (a token bucket); 0: no limit.
    public var sessionRatePerMinute = 0
    /// The proxy whose `X-Forwarded-For` names the client for `sessionRatePerMinute`.
    public var trustedProxy: IPAddress?
    public var maxConnections = 1024
    /// The default is HTTPServer's (one source): see `HTTPServerConfiguration.perIPConnectionLimit`.
    public var perIPConnections = HTTPServerConfiguration().perIPConnectionLimit
    public var connectionTimeoutSeconds = 30
    /// Seconds a request's line and headers may take, and then its body, however slowly they trickle in.
    public var headerTimeoutSeconds = HTTPServerConfiguration().headerTimeoutSeconds
    /// Bytes libmicrohttpd may use per connection for the request line, headers and buffers;
    /// larger headers or URLs get 431/414 (or a closed connection).
    public var connectionMemoryLimit = 32 * 1024
    public var listenBacklog = 511
    /// Where sessions are kept on disk; nil keeps them in memory only.
    public var dataDirectory: String?
    /// When the session journal is flushed to disk (with a data directory).
    public var fsync = FsyncPolicy.everysec
    /// Seconds a session write may wait for the disk (with a data directory) before it answers 503.
    public var storeTimeoutSeconds = 2

    public init() {}

    /// One settable option: its flag, environment variable, help text and how it is applied.
    struct Option: Sendable {
        let flag: String
        let environment: String
        let placeholder: String
        let help: String
        let apply: @Sendable (inout ServerSettings, String) throws(SettingsError) -> Void
    }

    static let options: [Option] = [
        Option(flag: "--config", environment: "MENU_CONFIG", placeholder: "PATH", help: "menu config JSON (default Config/menu.json)") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw .invalidValue(source: "--config", value: v, expected: "a file path") }
            s.configPath = v
        },
        Option(flag: "--host", environment: "MENU_HOST", placeholder: "ADDR", help: "IP address to listen on (default 127.0.0.1; 0.0.0.0 or :: for all)") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw .invalidValue(source: "--host", value: v, expected: "an IPv4 or IPv6 address") }
            s.host = v
        },
        integer("--port", "MENU_PORT", "port to listen on; 0 picks a free one (default 8080)", 0 ... 65535) { $0.port = $1 },
        integer("--threads", "MENU_THREADS", "HTTP threads (default 2)", 1 ... 256) { $0.threads = $1 },
        integer("--max-limit", "MENU_MAX_LIMIT", "largest page a client may ask for (default 500)", 1 ... 100_000) { $0.maxLimit = $1 },
        integer("--max-sessions", "MENU_MAX_SESSIONS", "sessions held at most; then eviction or 429 (default 1000000)", 1 ... 100_000_000) { $0.maxSessions = $1 },
        integer("--session-ttl", "MENU_SESSION_TTL", "seconds a session may stay idle before it expires (default 2592000, 30 days)", 1 ... 10 * 365 * 86400) { $0.sessionTTLSeconds = $1 },
        integer("--session-evict-idle", "MENU_SESSION_EVICT_IDLE", "seconds idle after which, at --max-sessions, the least recently used session is evicted for a new one (default 3600)", 0 ... 10 * 365 * 86400) { $0.sessionEvictIdleSeconds = $1 },
        integer("--max-changed-groups", "MENU_MAX_CHANGED_GROUPS", "groups one session may change from the default; then 409 (default 10000)", 1 ... 100_000_000) { $0.maxChangedGroups = $1 },
        integer("--session-rate", "MENU_SESSION_RATE", "sessions one client address may create a minute; then 429; 0 = no limit (default 0)", 0 ... 1_000_000) { $0.sessionRatePerMinute = $1 },
        Option(flag: "--trusted-proxy", environment: "MENU_TRUSTED_PROXY", placeholder: "ADDR", help: "the proxy whose X-Forwarded-For names the client for --session-rate (default none)") { s, v throws(SettingsError) in
            guard let address = IPAddress(v) else { throw .invalidValue(source: "--trusted-proxy", value: v, expected: "an IPv4 or IPv6 address") }
            s.trustedProxy = address
        },
        integer("--max-connections", "MENU_MAX_CONNECTIONS", "open connections at most (default 1024)", 1 ... 1_000_000) { $0.maxConnections = $1 },
        integer("--per-ip-connections", "MENU_PER_IP_CONNECTIONS", "open connections per client IP; 0 = no limit (default \(ServerSettings().perIPConnections))", 0 ... 1_000_000) { $0.perIPConnections = $1 },
        integer("--connection-timeout", "MENU_CONNECTION_TIMEOUT", "seconds an idle connection is kept (default 30)", 1 ... 86400) { $0.connectionTimeoutSeconds = $1 },
        integer("--header-timeout", "MENU_HEADER_TIMEOUT", "seconds a request's line and headers may take, and then its body, however slowly they arrive (default \(ServerSettings().headerTimeoutSeconds))", 1 ... 86400) { $0.headerTimeoutSeconds = $1 },
        integer("--connection-memory", "MENU_CONNECTION_MEMORY", "bytes per connection for request line and headers; more gets 431/414 (default 32768)", 4096 ... 1 << 24) { $0.connectionMemoryLimit = $1 },
        integer("--listen-backlog", "MENU_LISTEN_BACKLOG", "pending connections the kernel queues (default 511)", 1 ... 65535) { $0.listenBacklog = $1 },
        Option(flag: "--data-dir", environment: "MENU_DATA_DIR", placeholder: "DIR", help: "keep sessions on disk in DIR, an existing directory (default: memory only)") { s, v throws(SettingsError) in
            guard !v.isEmpty else { throw .invalidValue(source: "--data-dir", value: v, expected: "a directory path") }
            s.dataDirectory = v
        },
        Option(flag: "--fsync", environment: "MENU_FSYNC", placeholder: "POLICY", help: "always|everysec|no: when session changes are flushed to disk (default everysec)") { s, v throws(SettingsError) in
            guard let policy = FsyncPolicy(rawValue: v) else { throw .invalidValue(source: "--fsync", value: v, expected: "always, everysec or no") }
            s.fsync = policy
        },
        integer("--store-timeout", "MENU_STORE_TIMEOUT", "seconds a session write may wait for the disk before it answers 503 (default 2)", 1 ... 3600) { $0.storeTimeoutSeconds = $1 },
    ]

    private static func integer(_ flag: String, _ environment: String, _ help: String, _ range: ClosedRange<Int>,
                                _ set: @escaping @Sendable (inout ServerSettings, Int) -> Void) -> Option {
        Option(flag: flag, environment: environment, placeholder: "N", help: help) { settings, text throws(SettingsError) in
            guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let value = Int(text), range.contains(value)
            else {
                throw .invalidValue(source: flag, value: text, expected: "an integer from \(range.lowerBound) to \(range.upperBound)")
            }
            set(&settings, value)
        }
    }

    /// What the command line asks for.
    public enum Command: Sendable, Equatable {
        case run(ServerSettings)
        case help
        case version
    }

    /// Parses flags (`--flag value` or `--flag=value`) over environment variables over defaults.
    public static func parse(arguments: [String], environment: [String: String]) throws(SettingsError) -> Command {
        var settings = ServerSettings()
        for option in options {
            if let value = environment[option.environment] {
                do {
                    try option.apply(&settings, value)
                } catch .invalidValue(_, let value, let expected) {
                    throw .invalidValue(source: option.environment, value: value, expected: expected)
                } catch {
                    throw error
                }
            }
        }
        var index = 0
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
            let value: String
            if let inline {
                value = inline
            } else {
                guard index < arguments.count else { throw .missingValue(flag: flag) }
                value = arguments[index]
                index += 1
            }
            try option.apply(&settings, value)
        }
        return .run(settings)
    }

    public static var usage: String {
        var lines = ["usage: menu-server [options]", "", "Serves a tree-shaped menu as a flat, expandable table of rows over HTTP.", "", "options (each also an environment variable; the flag wins):"]
        for option in options {
            let left = "  \(option.flag) \(option.placeholder)"
            lines.append(left.padding(toLength: 30) + option.help + "  [\(option.environment)]")
        }
        lines.append("  --help".padding(toLength: 30) + "print this help")
        lines.append("  --version".padding(toLength: 30) + "print the version")
        return lines.joined(separator: "\n")
    }

    public static let version = "menu-server 0.1.0"
}

/// Why the command line or environment was refused; the message names the flag and value.
public enum SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownFlag(String)
    case missingValue(flag: String)
    /// `source` is the flag or environment variable that carried the value.
    case invalidValue(source: String, value: String, expected: String)

    public var description: String {
        switch self {
        case .unknownFlag(let flag): "unknown option \(flag); see --help"
        case .missingValue(let flag): "\(flag) needs a value; see --help"
        case .invalidValue(let source, let value, let expected): "invalid value \"\(value)\" for \(source): expected \(expected)"
        }
    }
}

extension String {
    fileprivate func padding(toLength length: Int) -> String {
        count >= length ? self + " " : self + String(repeating: " ", count: length - count)
    }
}
