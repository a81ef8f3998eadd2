// One source for each default and range: the settings start from HTTPServerConfiguration's and
// MenuAPI's values, the flags accept exactly the ranges HTTPServer accepts, and `--help`,
// docs/operations.md's flag table, docs/api.md, openapi.yaml and the Dockerfile state the same numbers.

import Foundation
import MenuService
import MenuSessionsDurable
import MenuTestSupport
import Testing

@testable import HTTPServer
@testable import MenuApp

extension AppTests {
    @Suite struct DefaultsTests {
        /// Each listener flag, the settings field it sets and the HTTPServerConfiguration field that
        /// field becomes (RunningServer copies one into the other).
        struct ListenerField: CustomTestStringConvertible, Sendable {
            let flag: String
            let settings: any WritableKeyPath<ServerSettings, Int> & Sendable
            let configuration: any WritableKeyPath<HTTPServerConfiguration, Int> & Sendable
            let name: String
            let range: ClosedRange<Int>
            var testDescription: String { flag }
        }

        typealias Range = HTTPServerConfiguration.ValidRange

        static let listenerFields: [ListenerField] = [
            ListenerField(flag: "--port", settings: \.port, configuration: \.port, name: "port", range: Range.port),
            ListenerField(
                flag: "--threads", settings: \.threads, configuration: \.threads, name: "threads", range: Range.threads),
            ListenerField(
                flag: "--max-connections", settings: \.maxConnections, configuration: \.connectionLimit,
                name: "connectionLimit", range: Range.connectionLimit),
            ListenerField(
                flag: "--per-ip-connections", settings: \.perIPConnections, configuration: \.perIPConnectionLimit,
                name: "perIPConnectionLimit", range: Range.perIPConnectionLimit),
            ListenerField(
                flag: "--connection-timeout", settings: \.connectionTimeoutSeconds,
                configuration: \.connectionTimeoutSeconds,
                name: "connectionTimeoutSeconds", range: Range.connectionTimeoutSeconds),
            ListenerField(
                flag: "--header-timeout", settings: \.headerTimeoutSeconds, configuration: \.headerTimeoutSeconds,
                name: "headerTimeoutSeconds", range: Range.headerTimeoutSeconds),
            ListenerField(
                flag: "--connection-memory", settings: \.connectionMemoryLimit, configuration: \.connectionMemoryLimit,
                name: "connectionMemoryLimit", range: Range.connectionMemoryLimit),
            ListenerField(
                flag: "--listen-backlog", settings: \.listenBacklog, configuration: \.listenBacklog,
                name: "listenBacklog", range: Range.listenBacklog)
        ]

        static func option(_ flag: String) throws -> ServerSettings.Option {
            try #require(ServerSettings.options.first { $0.flag == flag }, "no option \(flag)")
        }

        /// The defaults `--help` prints, by flag: the text after "(default " up to ")" or ",".
        static func usageDefaults() -> [String: String] {
            var shown: [String: String] = [:]
            for line in ServerSettings.usage.split(separator: "\n") where line.hasPrefix("  --") {
                let flag = String(line.dropFirst(2).prefix { $0 != " " })
                guard let start = line.range(of: "(default ") else { continue }
                shown[flag] = String(line[start.upperBound...].prefix { $0 != ")" && $0 != "," })
            }
            return shown
        }

        static func repositoryFile(_ name: String) throws -> String {
            try String(contentsOf: LivePaths.packageRoot.appendingPathComponent(name), encoding: .utf8)
        }

        // MARK: The settings and the server configuration

        @Test func theSettingsStartFromTheServerConfigurationAndTheServicesDefaults() {
            let settings = ServerSettings()
            let configuration = HTTPServerConfiguration()
            for field in Self.listenerFields {
                #expect(
                    settings[keyPath: field.settings] == configuration[keyPath: field.configuration], "\(field.flag)")
            }
            #expect(settings.host == configuration.host)
            #expect(settings.maxLimit == MenuAPI.defaultMaxLimit)
            #expect(MenuAPI.maxLimitRange.contains(MenuAPI.defaultMaxLimit))
            #expect(MenuAPI.defaultLimit <= MenuAPI.defaultMaxLimit)
        }

        @Test(arguments: listenerFields)
        func aListenerFlagAcceptsExactlyTheRangeTheServerAccepts(field: ListenerField) throws {
            let option = try Self.option(field.flag)
            #expect(option.integer?.range == field.range)
            for accepted in [field.range.lowerBound, field.range.upperBound] {
                var configuration = HTTPServerConfiguration()
                configuration[keyPath: field.configuration] = accepted
                // connectionLimit must also be at least `threads`: give the other one room.
                if field.name == "connectionLimit" { configuration.threads = 1 }
                if field.name == "threads" {
                    configuration.connectionLimit = max(configuration.connectionLimit, accepted)
                }
                #expect(throws: Never.self, "\(field.name) = \(accepted)") { try configuration.validate() }
            }
            for refused in [field.range.lowerBound - 1, field.range.upperBound + 1] {
                var configuration = HTTPServerConfiguration()
                configuration[keyPath: field.configuration] = refused
                if field.name == "connectionLimit" { configuration.threads = 1 }
                do {
                    try configuration.validate()
                    Issue.record("\(field.name) = \(refused) was accepted")
                } catch {
                    guard case .invalidConfiguration(let setting, let value, let requirement) = error else {
                        Issue.record("unexpected \(error)")
                        continue
                    }
                    #expect(setting == field.name && value == refused)
                    #expect(
                        requirement.hasPrefix("\(field.range.lowerBound)...\(field.range.upperBound)"), "\(requirement)"
                    )
                }
            }
        }

        // MARK: Every integer flag's range

        @Test func eachIntegerFlagTakesItsBoundsAndRefusesOnePastThemNamingTheFlag() throws {
            let integers = ServerSettings.options.filter { $0.integer != nil }
            #expect(integers.count >= 15)
            for option in integers {
                let integer = try #require(option.integer)
                for accepted in [integer.range.lowerBound, integer.range.upperBound] {
                    let command = try ServerSettings.parse(arguments: [option.flag, String(accepted)], environment: [:])
                    guard case .run(let settings) = command else {
                        Issue.record("\(option.flag) \(accepted): \(command)")
                        continue
                    }
                    #expect(settings[keyPath: integer.field] == accepted, "\(option.flag)")
                }
                let expected = "an integer from \(integer.range.lowerBound) to \(integer.range.upperBound)"
                for refused in [integer.range.lowerBound - 1, integer.range.upperBound + 1] {
                    #expect(
                        throws: SettingsError.invalidValue(
                            source: option.flag, value: String(refused), expected: expected)
                    ) {
                        try ServerSettings.parse(arguments: ["\(option.flag)=\(refused)"], environment: [:])
                    }
                    #expect(
                        throws: SettingsError.invalidValue(
                            source: option.environment, value: String(refused), expected: expected)
                    ) {
                        try ServerSettings.parse(arguments: [], environment: [option.environment: String(refused)])
                    }
                }
            }
        }

        // MARK: What the documents say

        @Test func theUsageTextStatesEachDefault() throws {
            let shown = Self.usageDefaults()
            let settings = ServerSettings()
            #expect(Set(shown.keys) == Set(ServerSettings.options.map(\.flag)))
            for option in ServerSettings.options {
                if let integer = option.integer {
                    #expect(shown[option.flag] == String(settings[keyPath: integer.field]), "\(option.flag)")
                }
            }
            #expect(shown["--config"] == settings.configPath)
            #expect(shown["--host"] == settings.host)
            #expect(shown["--fsync"] == settings.fsync.rawValue)
            #expect(shown["--trusted-proxy"] == "none" && settings.trustedProxy == nil)
            #expect(shown["--data-dir"] == "none" && settings.dataDirectory == nil)
        }

        @Test func theOperationsFlagTableStatesTheSameFlagsVariablesAndDefaults() throws {
            let shown = Self.usageDefaults()
            var flags: [String] = []
            for line in try Self.repositoryFile("docs/operations.md").split(separator: "\n")
            where line.hasPrefix("| `--") {
                let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                try #require(cells.count >= 4, "\(line)")
                let flag = String(cells[0].dropFirst().prefix { $0 != " " && $0 != "`" })
                let variable = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
                let stated = cells[2].prefix { $0 != " " }.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
                flags.append(flag)
                #expect(variable == (try? Self.option(flag))?.environment, "\(flag)")
                #expect(
                    stated == shown[flag],
                    "docs/operations.md says \(flag) defaults to \(stated), --help says \(shown[flag] ?? "nothing")")
            }
            #expect(flags == ServerSettings.options.map(\.flag))
        }

        @Test func theAPIDocAndOpenAPIStateThePageAndBodyLimitsAndTheDefaultAddress() throws {
            let api = try Self.repositoryFile("docs/api.md")
            #expect(api.contains("`limit` 1 to `--max-limit` (default \(MenuAPI.defaultLimit),"))
            #expect(api.contains("| 413 | `payload_too_large` | body over \(MenuAPI.maxBodyBytes / 1024) KiB |"))
            // openapi.yaml's Limit parameter: the page-size default and the default --max-limit.
            let openapi = try Self.repositoryFile("openapi.yaml").split(
                separator: "\n", omittingEmptySubsequences: false)
            let start = try #require(openapi.firstIndex(of: "    Limit:"))
            let block = openapi[start...].prefix { $0 == "    Limit:" || $0.hasPrefix("     ") }
            #expect(block.contains("        maximum: \(MenuAPI.defaultMaxLimit)"))
            #expect(block.contains("        default: \(MenuAPI.defaultLimit)"))
            #expect(block.contains { $0.contains("(default \(MenuAPI.defaultMaxLimit))") })
            #expect(openapi.contains { $0.contains("a request body over \(MenuAPI.maxBodyBytes / 1024) KiB") })
            // "A local menu-server with its default settings."
            let settings = ServerSettings()
            #expect(openapi.contains("  - url: http://\(settings.host):\(settings.port)"))
        }

        /// The image exposes the port it sets, and its health check names no port: `menu-server
        /// healthcheck` reads MENU_PORT as the server does, so a changed port moves both.
        @Test func theDockerfilesPortIsTheOneItExposesAndItsHealthCheckFollowsIt() throws {
            let dockerfile = try Self.repositoryFile("Dockerfile")
            let variable = try #require(dockerfile.range(of: "MENU_PORT="))
            let digits = dockerfile[variable.upperBound...].prefix { $0.isNumber }
            #expect(!digits.isEmpty)
            #expect(dockerfile.contains("EXPOSE \(digits)\n"))
            let healthCheck = try #require(dockerfile.split(separator: "\n").first { $0.hasPrefix("HEALTHCHECK ") })
            #expect(healthCheck.hasSuffix(#"CMD ["menu-server", "healthcheck"]"#))
            #expect(!healthCheck.contains(digits) && !dockerfile.contains("curl"))
        }
    }
}
