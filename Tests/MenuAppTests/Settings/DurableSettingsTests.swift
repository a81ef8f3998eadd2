import DurableTestSupport
import Foundation
import MenuApp
import MenuServiceTestSupport
import MenuSessionsDurable
import Testing

extension AppTests {
    /// The durable store's settings and what RunningServer makes of a bad data directory.
    @Suite("Durable: settings and start-up through RunningServer")
    struct DurableSettingsTests {
        @Test("RunningServer turns a bad data directory into a start-up error naming it")
        func menuServerReportsABadDataDirectory() throws {
            let directory = DurableTemporaryDirectory()
            defer { directory.remove() }
            try DurableFixtures.menuJSON.write(toFile: directory.file("menu.json"), atomically: true, encoding: .utf8)
            var settings = ServerSettings()
            settings.configPath = directory.file("menu.json")
            settings.port = 0
            settings.dataDirectory = directory.file("menu.json")
            do {
                let server = try RunningServer(settings: settings)
                server.shutdown()
                Issue.record("started on a regular file")
            } catch {
                guard case .dataDirectory = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(error.description.contains(directory.file("menu.json")))
            }
        }

        @Test("--data-dir and --fsync parse from flags and environment; a bad policy is refused")
        func settingsParse() throws {
            let parsed = try ServerSettings.parse(
                arguments: ["--data-dir", "/var/lib/menu", "--fsync=always"], environment: [:])
            guard case .run(let settings) = parsed else {
                Issue.record("\(parsed)")
                return
            }
            #expect(settings.dataDirectory == "/var/lib/menu" && settings.fsync == .always)
            let environment = try ServerSettings.parse(
                arguments: [], environment: ["MENU_DATA_DIR": "/d", "MENU_FSYNC": "no"])
            guard case .run(let fromEnvironment) = environment else {
                Issue.record("\(environment)")
                return
            }
            #expect(fromEnvironment.dataDirectory == "/d" && fromEnvironment.fsync == .no)
            guard case .run(let defaults) = try ServerSettings.parse(arguments: [], environment: [:]) else { return }
            #expect(defaults.dataDirectory == nil && defaults.fsync == .everysec)
            #expect(
                throws: SettingsError.invalidValue(
                    source: "--fsync", value: "sometimes", expected: "always, everysec or no")
            ) {
                try ServerSettings.parse(arguments: ["--fsync", "sometimes"], environment: [:])
            }
        }
    }
}
