import MenuServiceTestSupport
import Testing

@testable import MenuApp
@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

extension AppTests {
    @Suite struct SettingsTests {
        func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(SettingsError) -> ServerSettings
        {
            guard case .run(let settings) = try ServerSettings.parse(arguments: arguments, environment: environment)
            else {
                return ServerSettings()
            }
            return settings
        }

        @Test func defaultsMatchTheDocumentation() throws {
            let settings = try parse([])
            #expect(settings.configPath == "Config/menu.json")
            #expect(settings.host == "127.0.0.1")
            #expect(settings.port == 8080)
            #expect(settings.maxLimit == 500)
        }

        @Test func flagsSetValuesInBothSpellings() throws {
            let settings = try parse([
                "--port", "0", "--host=0.0.0.0", "--threads", "4", "--max-limit=20", "--config", "x.json"
            ])
            #expect(settings.port == 0 && settings.host == "0.0.0.0" && settings.threads == 4)
            #expect(settings.maxLimit == 20 && settings.configPath == "x.json")
        }

        @Test func environmentSetsValuesAndFlagsWin() throws {
            let environment = ["MENU_PORT": "9000", "MENU_HOST": "::1", "MENU_CONFIG": "env.json"]
            #expect(try parse([], environment).port == 9000)
            #expect(try parse(["--port", "9001"], environment).port == 9001)
            #expect(try parse([], environment).configPath == "env.json")
        }

        @Test func badValueNamesTheFlagAndValue() {
            #expect(
                throws: SettingsError.invalidValue(
                    source: "--port", value: "abc", expected: "an integer from 0 to 65535")
            ) {
                try parse(["--port", "abc"])
            }
        }

        @Test func badEnvironmentValueNamesTheVariable() {
            do {
                _ = try parse([], ["MENU_THREADS": "0"])
                Issue.record("expected an error")
            } catch {
                #expect(error.description.contains("MENU_THREADS"))
                #expect(error.description.contains("\"0\""))
            }
        }

        @Test func unknownFlagAndMissingValueAreErrors() {
            #expect(throws: SettingsError.unknownFlag("--bogus")) { try parse(["--bogus"]) }
            #expect(throws: SettingsError.missingValue(flag: "--port")) { try parse(["--port"]) }
        }

        @Test func connectionLimitsAreFlags() throws {
            let settings = try parse([
                "--connection-memory", "8192", "--listen-backlog", "64", "--max-connections", "10",
                "--per-ip-connections", "2", "--connection-timeout", "5"
            ])
            #expect(settings.connectionMemoryLimit == 8192 && settings.listenBacklog == 64)
            #expect(
                settings.maxConnections == 10 && settings.perIPConnections == 2
                    && settings.connectionTimeoutSeconds == 5)
            #expect(throws: SettingsError.self) { try parse(["--connection-memory", "100"]) }
        }

        @Test func emptyInlineValueIsRefusedNotTakenFromTheNextArgument() {
            #expect(throws: SettingsError.invalidValue(source: "--config", value: "", expected: "a file path")) {
                try parse(["--config=", "--port", "0"])
            }
        }

        @Test func helpAndVersionAreCommands() throws {
            #expect(try ServerSettings.parse(arguments: ["--help"], environment: [:]) == .help)
            #expect(try ServerSettings.parse(arguments: ["--version"], environment: [:]) == .version)
            #expect(ServerSettings.usage.contains("--max-limit"))
        }
    }
}
