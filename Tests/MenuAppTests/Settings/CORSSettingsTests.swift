import Testing

@testable import MenuApp
@testable import MenuService

extension AppTests {
    /// `--cors-origin` / `MENU_CORS_ORIGIN`: repeatable or comma-separated, checked as serialized
    /// origins when parsed, the flags replacing the environment's list, and the policy they make.
    @Suite struct CORSSettingsTests {
        func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(SettingsError) -> ServerSettings
        {
            try SettingsTests().parse(arguments, environment)
        }

        @Test func noOriginByDefaultMeansNoPolicy() throws {
            let settings = try parse([])
            #expect(settings.corsOrigins.isEmpty && settings.crossOriginPolicy == nil)
        }

        @Test func theFlagRepeatsAndTakesCommaSeparatedOriginsAsTheEnvironmentDoes() throws {
            let flags = try parse([
                "--cors-origin", "http://a.test:3000", "--cors-origin=https://B.test, *", "--cors-origin",
                "http://a.test:3000"
            ])
            #expect(flags.corsOrigins == ["http://a.test:3000", "https://B.test", "*"])
            let policy = try #require(flags.crossOriginPolicy)
            #expect(policy.origins == ["http://a.test:3000", "https://b.test"])
            #expect(policy.anyOriginReads)
            let environment = try parse([], ["MENU_CORS_ORIGIN": "http://[::1]:8080,http://localhost"])
            #expect(environment.crossOriginPolicy?.origins == ["http://[::1]:8080", "http://localhost"])
            #expect(environment.crossOriginPolicy?.anyOriginReads == false)
        }

        @Test func theFlagsReplaceTheEnvironmentsOrigins() throws {
            let settings = try parse(["--cors-origin", "http://flag.test"], ["MENU_CORS_ORIGIN": "http://env.test,*"])
            #expect(settings.corsOrigins == ["http://flag.test"])
        }

        @Test(arguments: [
            ("http://a.test/", "an origin has no path, not even a trailing /"),
            ("http://a.test/app", "an origin has no path, not even a trailing /"),
            ("a.test", "an origin is scheme://host[:port], e.g. http://localhost:3000"),
            ("null", "an origin is scheme://host[:port], e.g. http://localhost:3000"),
            ("http://user@a.test", "an origin has no user info (user@)"),
            ("http://a.test:0", "the port must be a number from 1 to 65535"),
            ("http://a.test:65536", "the port must be a number from 1 to 65535"),
            ("http://a.test:", "the port must be a number from 1 to 65535"),
            ("http://", "the host must be a name or address in ASCII (punycode), without spaces or commas"),
            ("http://ä.test", "the host must be a name or address in ASCII (punycode), without spaces or commas"),
            ("1http://a.test", "the scheme must be letters, digits, + - or . starting with a letter")
        ])
        func aValueThatIsNoOriginIsRefusedSayingWhy(value: String, reason: String) {
            #expect(
                throws: SettingsError.invalidValue(
                    source: "--cors-origin", value: value, expected: "an origin, scheme://host[:port] (\(reason))")
            ) {
                try parse(["--cors-origin", value])
            }
            #expect(
                throws: SettingsError.invalidValue(
                    source: "MENU_CORS_ORIGIN", value: value, expected: "an origin, scheme://host[:port] (\(reason))")
            ) {
                try parse([], ["MENU_CORS_ORIGIN": "http://fine.test," + value])
            }
        }

        @Test func anEmptyListIsRefused() {
            #expect(
                throws: SettingsError.invalidValue(
                    source: "--cors-origin", value: " , ", expected: "an origin such as http://localhost:3000, or *")
            ) {
                try parse(["--cors-origin", " , "])
            }
        }
    }
}
