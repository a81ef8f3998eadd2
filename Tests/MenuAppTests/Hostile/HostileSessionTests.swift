import Foundation
import HTTPCore
import HTTPServer
import MenuAppTestSupport
import MenuModel
import MenuServiceTestSupport
import MenuTestSupport
import Testing

@testable import MenuApp
@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

extension AppTests {
    /// Session creation per client: the token bucket, the client's address (the peer's, or what a
    /// trusted proxy put in `X-Forwarded-For`), and hostile `X-Forwarded-For` values over real HTTP.
    @Suite("Sessions: creation rate per client, X-Forwarded-For from a trusted proxy only")
    struct HostileSessionTests {
        private let client = IPAddress("192.0.2.7")!
        private let other = IPAddress("192.0.2.8")!

        @Test func aClientMayCreateItsRateOfSessionsThenWaitsForTheNextToken() {
            let clock = ManualSessionClock()
            let limiter = SessionRateLimiter(perMinute: 3, clock: clock.now)
            for _ in 0 ..< 3 { #expect(limiter.admit(client) == nil) }
            #expect(limiter.admit(client) == 20)  // one token every 20 s
            #expect(limiter.admit(other) == nil)  // buckets are per address
            clock.advance(milliseconds: 19_000)
            #expect(limiter.admit(client) == 1)
            clock.advance(milliseconds: 1_000)
            #expect(limiter.admit(client) == nil)
            #expect(limiter.admit(client) == 20)
            clock.advance(milliseconds: 3_600_000)  // a long pause refills to the rate, no more
            for _ in 0 ..< 3 { #expect(limiter.admit(client) == nil) }
            #expect(limiter.admit(client) != nil)
        }

        @Test func anIPv6ClientIsLimitedByItsSlash64() {
            let limiter = SessionRateLimiter(perMinute: 1, clock: ManualSessionClock().now)
            #expect(limiter.admit(IPAddress("2001:db8:1:2::1")!) == nil)
            #expect(limiter.admit(IPAddress("2001:db8:1:2:ffff::9")!) != nil)
            #expect(limiter.admit(IPAddress("2001:db8:1:3::1")!) == nil)
        }

        @Test func theServiceRefusesCreationsPastTheRateWithRetryAfterAndLetsReadsThrough() throws {
            let menu = try sichuanMenu()
            let service = MenuAPI(
                menu: menu, store: InMemorySessionStore(menu: menu),
                sessionRateLimiter: SessionRateLimiter(perMinute: 2, clock: ManualSessionClock().now))
            func request(_ method: String, _ path: String, session: String? = nil) -> HTTPResponse {
                service.respond(
                    to: HTTPRequest(
                        method: method, path: path, headers: session.map { [("X-Session-Id", $0)] } ?? [],
                        peerAddress: client))
            }
            let session = try #require(request("POST", "/sessions").header("X-Session-Id"))
            #expect(request("POST", "/groups/drinks/toggle").status == 200)  // a write without a session creates one
            for refused in [request("POST", "/sessions"), request("POST", "/groups/drinks/toggle")] {
                #expect(refused.status == 429)
                #expect(refused.errorCode == "rate_limited")
                #expect(refused.header("Retry-After") == "30")
            }
            #expect(request("POST", "/groups/drinks/toggle", session: session).status == 200)
            #expect(request("GET", "/count", session: session).status == 200)
        }

        @Test(arguments: [
            ("192.0.2.1", "192.0.2.1"), ("  198.51.100.4\t", "198.51.100.4"), ("10.0.0.1, 203.0.113.9", "203.0.113.9"),
            ("unknown,2001:db8::5", "2001:db8::5"), ("::ffff:192.0.2.3", "192.0.2.3"), ("2001:DB8::A", "2001:db8::a")
        ])
        func theLastEntryOfXForwardedForIsTheClient(value: String, expected: String) {
            #expect(HTTPRequest.lastForwardedAddress(in: Array(value.utf8))?.description == expected)
        }

        @Test(arguments: [
            "", ",", "192.0.2.1,", "192.0.2.1, ", "192.0.2.256", "192.0.2", "1.2.3.4.5", "192.0.2.1:8080",
            "[2001:db8::1]",
            "2001:db8::1%eth0", "fe80::1::2", "unknown", "_hidden", "1.2.3.4 5.6.7.8", "0x7f.0.0.1", "01.2.3.4\u{0}",
            String(repeating: "1", count: 46), String(repeating: "9.", count: 4_000) + "9", "２.２.２.２"
        ])
        func aMalformedLastEntryIsNoAddress(value: String) {
            #expect(HTTPRequest.lastForwardedAddress(in: Array(value.utf8)) == nil)
        }

        @Test func xForwardedForCountsOnlyFromTheTrustedProxyAndOnlyItsLastEntry() {
            let proxy = IPAddress("10.1.1.1")!
            func from(_ peer: IPAddress, _ values: [String]) -> IPAddress? {
                HTTPRequest(
                    method: "POST", path: "/sessions", headers: values.map { ("X-Forwarded-For", $0) },
                    peerAddress: peer
                )
                .clientAddress(trustedProxy: proxy)
            }
            #expect(from(client, ["203.0.113.1"]) == client)  // not the proxy: the header proves nothing
            #expect(from(proxy, ["203.0.113.1"]) == IPAddress("203.0.113.1"))
            #expect(from(proxy, ["198.51.100.1, 203.0.113.1"]) == IPAddress("203.0.113.1"))
            #expect(from(proxy, ["198.51.100.1", "203.0.113.2"]) == IPAddress("203.0.113.2"))  // the proxy's header is the last
            #expect(from(proxy, []) == proxy)
            #expect(from(proxy, ["garbage"]) == proxy)
            #expect(HTTPRequest(method: "GET", path: "/").clientAddress(trustedProxy: proxy) == nil)
        }

        @Test func theFlagsReachTheSettingsAndABadProxyAddressIsRefusedByName() throws {
            let command = try ServerSettings.parse(
                arguments: ["--session-rate", "30", "--trusted-proxy=::1"], environment: [:])
            guard case .run(let settings) = command else {
                Issue.record("not a run: \(command)")
                return
            }
            #expect(settings.sessionRatePerMinute == 30)
            #expect(settings.trustedProxy == IPAddress("::1"))
            #expect(ServerSettings().sessionRatePerMinute == 0)
            #expect(
                throws: SettingsError.invalidValue(
                    source: "--trusted-proxy", value: "proxy.local", expected: "an IPv4 or IPv6 address")
            ) {
                try ServerSettings.parse(arguments: ["--trusted-proxy", "proxy.local"], environment: [:])
            }
        }

        @Test func aLiveServerLimitsEachForwardedClientAndSurvivesHostileHeaders() throws {
            let server = try LiveServer { settings in
                settings.sessionRatePerMinute = 1
                settings.trustedProxy = IPAddress("127.0.0.1")
            }
            defer { server.shutdown() }
            let connection = try server.connect()
            func create(_ forwarded: [String]) throws -> LiveResponse {
                try connection.request("POST", "/sessions", headers: forwarded.map { ("X-Forwarded-For", $0) })
            }
            #expect(try create(["192.0.2.1"]).status == 201)
            let refused = try create(["198.51.100.9, 192.0.2.1"])  // the same client behind one more hop
            #expect(refused.status == 429)
            #expect(refused.header("Retry-After").flatMap(Int.init).map { (1 ... 60).contains($0) } == true)
            #expect(try create(["192.0.2.2"]).status == 201)
            // Hostile values: the proxy's own address (127.0.0.1) is their bucket, so the first one
            // gets 201 and the rest 429; none may get anything else or break the connection.
            let hostile = [
                "", ",,,,", String(repeating: "1.2.3.4,", count: 2_000) + "junk", "1.2.3.4:80", "[::1]",
                String(repeating: " ", count: 500), "2001:db8::1%25lo", "\u{7f}", "192.0.2.999"
            ]
            var statuses: [Int] = []
            for value in hostile { statuses.append(try create([value]).status) }
            #expect(statuses.first == 201)
            #expect(statuses.dropFirst().allSatisfy { $0 == 429 }, "\(statuses)")
            #expect(try connection.request("GET", "/healthz").status == 200)
        }

        @Test func withoutATrustedProxyXForwardedForIsIgnored() throws {
            let server = try LiveServer { $0.sessionRatePerMinute = 1 }
            defer { server.shutdown() }
            let connection = try server.connect()
            #expect(
                try connection.request("POST", "/sessions", headers: [("X-Forwarded-For", "192.0.2.1")]).status == 201)
            #expect(
                try connection.request("POST", "/sessions", headers: [("X-Forwarded-For", "192.0.2.2")]).status == 429)
        }
    }
}
