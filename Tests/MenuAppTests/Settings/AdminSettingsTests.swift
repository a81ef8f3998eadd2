import MenuApp
import Testing

extension AppTests {
    /// `--admin-listen` and `--admin-token-file`: both or neither, and their values checked.
    @Suite("Settings: --admin-listen, --admin-token-file")
    struct AdminSettingsTests {
        private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(SettingsError)
            -> ServerSettings
        {
            guard case .run(let settings) = try ServerSettings.parse(arguments: arguments, environment: environment)
            else { preconditionFailure("not a run command") }
            return settings
        }

        @Test func byDefaultThereIsNoAdminAPI() throws {
            let settings = try parse([])
            #expect(settings.adminListen == nil && settings.adminTokenFile == nil)
        }

        @Test func bothFlagsOrBothVariablesTurnItOn() throws {
            let flags = try parse(["--admin-listen", "127.0.0.1:9091", "--admin-token-file", "/run/secrets/admin"])
            #expect(
                flags.adminListen == ListenAddress("127.0.0.1:9091") && flags.adminTokenFile == "/run/secrets/admin")
            let variables = try parse(
                [], ["MENU_ADMIN_LISTEN": "[::1]:9091", "MENU_ADMIN_TOKEN_FILE": "/etc/menu-server/admin-tokens"])
            #expect(variables.adminListen?.host == "::1" && variables.adminTokenFile == "/etc/menu-server/admin-tokens")
        }

        @Test func oneWithoutTheOtherIsRefusedSayingWhy() {
            #expect(
                throws: SettingsError.requires(
                    "--admin-listen", "--admin-token-file", reason: "the admin API has no default token")
            ) {
                try parse(["--admin-listen", "127.0.0.1:9091"])
            }
            do {
                _ = try parse(["--admin-token-file", "/run/secrets/admin"])
                Issue.record("accepted a token file without a listener")
            } catch {
                #expect(error.description.hasPrefix("--admin-token-file needs --admin-listen"), "\(error)")
            }
        }

        @Test(arguments: [
            (["--admin-listen", "localhost:9091", "--admin-token-file", "/x"], "--admin-listen"),
            (["--admin-listen", "127.0.0.1", "--admin-token-file", "/x"], "--admin-listen"),
            (["--admin-listen", "127.0.0.1:1", "--admin-token-file="], "--admin-token-file")
        ])
        func aBadValueIsRefusedNamingTheFlag(arguments: [String], flag: String) {
            do {
                _ = try parse(arguments)
                Issue.record("\(arguments) was accepted")
            } catch {
                #expect(error.description.contains("for \(flag):"), "\(error)")
            }
        }
    }
}
