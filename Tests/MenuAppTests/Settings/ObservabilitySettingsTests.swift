import MenuApp
import Testing

extension AppTests {
    /// The flags of the metrics listener and the log: values, their variables, and clear refusals.
    @Suite("Settings: --metrics-listen, --log-format, --log-level, --quiet")
    struct ObservabilitySettingsTests {
        private func settings(_ arguments: [String], _ environment: [String: String] = [:]) throws(SettingsError)
            -> ServerSettings
        {
            guard case .run(let settings) = try ServerSettings.parse(arguments: arguments, environment: environment)
            else {
                preconditionFailure("not a run command")
            }
            return settings
        }

        @Test func theDefaultsAreMetricsOnTheMainPortTextLinesAtInfoAndRequestsLogged() throws {
            let defaults = try settings([])
            #expect(
                defaults.metricsListen == nil && defaults.logFormat == .text && defaults.logLevel == .info
                    && !defaults.quiet)
        }

        @Test func flagsAndVariablesSetEachOneAndTheFlagWins() throws {
            let parsed = try settings(
                ["--metrics-listen", "[::1]:9090", "--log-format=json", "--log-level", "warn", "--quiet"],
                ["MENU_LOG_FORMAT": "text", "MENU_QUIET": "no"])
            #expect(
                parsed.metricsListen == ListenAddress("[::1]:9090") && parsed.metricsListen?.host == "::1"
                    && parsed.metricsListen?.port == 9090)
            #expect(parsed.logFormat == .json && parsed.logLevel == .warn && parsed.quiet)
            let fromEnvironment = try settings(
                [], ["MENU_METRICS_LISTEN": "0.0.0.0:0", "MENU_QUIET": "yes", "MENU_LOG_LEVEL": "error"])
            #expect(
                fromEnvironment.metricsListen?.host == "0.0.0.0" && fromEnvironment.quiet
                    && fromEnvironment.logLevel == .error)
            #expect(try settings(["--quiet=no"]).quiet == false)
        }

        @Test(arguments: [
            (["--metrics-listen", "localhost:9090"], "--metrics-listen"),
            (["--metrics-listen", "127.0.0.1"], "--metrics-listen"),
            (["--metrics-listen", "127.0.0.1:65536"], "--metrics-listen"),
            (["--metrics-listen", "127.0.0.1:+1"], "--metrics-listen"),
            (["--log-format", "xml"], "--log-format"), (["--log-level", "verbose"], "--log-level"),
            (["--quiet=maybe"], "--quiet")
        ])
        func aBadValueIsRefusedNamingItsFlag(arguments: [String], flag: String) {
            #expect {
                try settings(arguments)
            } throws: { error in
                "\(error)".contains("for \(flag): expected")
            }
        }
    }
}
