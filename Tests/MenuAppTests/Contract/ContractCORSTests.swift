import Foundation
import MenuApp
import MenuAppTestSupport
import Testing

extension AppTests {
    /// Cross-origin requests (`--cors-origin`) over both transports: a listed origin's preflight is
    /// answered with the route's methods and the headers the API reads, its answers let the page read
    /// `X-Session-Id` and `ETag`; an origin not listed gets ordinary answers without any
    /// `Access-Control-*` header (never an error); `*` lets any origin read but not write.
    @Suite("Contract: CORS for web apps on other origins, in-process and over real HTTP")
    struct ContractCORSTests {
        static let app = "http://app.test:3000"
        static let other = "https://other.test"

        static func start(_ transport: ContractTransport, origins: [String]) throws -> ContractServer {
            try transport.start { $0.corsOrigins = origins }
        }

        static func preflight(
            _ client: any ContractClient, _ path: String, origin: String, method: String,
            headers: String? = nil
        ) async throws -> LiveResponse {
            var fields = [("Origin", origin), ("Access-Control-Request-Method", method)]
            if let headers { fields.append(("Access-Control-Request-Headers", headers)) }
            return try await client.send("OPTIONS", path, headers: fields)
        }

        /// No `Access-Control-Allow-*` or `-Expose-*` header at all.
        static func expectNoGrant(_ response: LiveResponse, sourceLocation: SourceLocation = #_sourceLocation) {
            let granted = response.headers.filter { $0.name.lowercased().hasPrefix("access-control-") }
            #expect(granted.isEmpty, "\(granted)", sourceLocation: sourceLocation)
        }

        @Test(arguments: ContractTransport.allCases)
        func aListedOriginsPreflightIsAnsweredWithTheRoutesMethodsAndTheHeadersTheAPIReads(
            over transport: ContractTransport
        ) async throws {
            let server = try Self.start(transport, origins: [Self.other, Self.app])
            defer { server.shutdown() }
            let client = server.client()
            let toggle = try await Self.preflight(
                client, "/groups/drinks/toggle", origin: Self.app, method: "POST",
                headers: "x-session-id, content-type,If-Match")
            #expect(toggle.status == 204)
            #expect(toggle.body.isEmpty)
            #expect(toggle.header("Access-Control-Allow-Origin") == Self.app)
            #expect(toggle.header("Access-Control-Allow-Methods") == "POST")
            #expect(
                toggle.header("Access-Control-Allow-Headers") == "X-Session-Id, If-Match, If-None-Match, Content-Type")
            #expect(toggle.header("Access-Control-Max-Age") == "600")
            #expect(toggle.header("Allow") == "POST")
            #expect(toggle.header("Vary")?.contains("Origin") == true)
            let rows = try await Self.preflight(
                client, "/rows", origin: Self.other, method: "GET", headers: "X-Session-Id, If-None-Match")
            #expect(rows.status == 204)
            #expect(rows.header("Access-Control-Allow-Origin") == Self.other)
            #expect(rows.header("Access-Control-Allow-Methods") == "GET, HEAD")
            let unknown = try await Self.preflight(client, "/nope", origin: Self.app, method: "GET")
            try liveExpectError(unknown, status: 404, code: "not_found")
        }

        /// `/session` is two routes on one path (`GET`/`HEAD` and `DELETE`): a preflight for any of
        /// its methods lists all three and grants the one asked, with `X-Session-Id`, the only place
        /// a session id goes. The old path form is `404 moved` to a preflight too.
        @Test(arguments: ContractTransport.allCases)
        func aPreflightOnTheSessionPathListsEveryMethodOfThePathAndAllowsTheSessionHeader(
            over transport: ContractTransport
        ) async throws {
            let server = try Self.start(transport, origins: [Self.app])
            defer { server.shutdown() }
            let client = server.client()
            for method in ["GET", "HEAD", "DELETE"] {
                let response = try await Self.preflight(
                    client, "/session", origin: Self.app, method: method, headers: "x-session-id, if-none-match")
                #expect(response.status == 204, "\(method)")
                #expect(response.header("Allow") == "GET, HEAD, DELETE", "\(method)")
                #expect(response.header("Access-Control-Allow-Origin") == Self.app, "\(method)")
                #expect(response.header("Access-Control-Allow-Methods") == "GET, HEAD, DELETE", "\(method)")
                #expect(response.header("Access-Control-Allow-Headers")?.contains("X-Session-Id") == true, "\(method)")
            }
            let old = try await Self.preflight(
                client, "/sessions/AAAAAAAAAAAAAAAAAAAAAA", origin: Self.app, method: "DELETE")
            try liveExpectError(old, status: 404, code: "moved")
            Self.expectNoGrant(old)
        }

        @Test(arguments: ContractTransport.allCases)
        func aListedOriginsAnswersLetThePageReadTheSessionAndTheTag(over transport: ContractTransport) async throws {
            let server = try Self.start(transport, origins: [Self.app])
            defer { server.shutdown() }
            let client = server.client()
            let toggle = try await client.send("POST", "/groups/drinks/toggle", headers: [("Origin", Self.app)])
            #expect(toggle.status == 200)
            #expect(toggle.header("Access-Control-Allow-Origin") == Self.app)
            #expect(toggle.header("Access-Control-Expose-Headers") == "X-Session-Id, ETag")
            #expect(toggle.header("Vary") == "Origin")
            let session = try #require(toggle.header("X-Session-Id"))
            let rows = try await client.send("GET", "/rows?limit=2", session: session, headers: [("Origin", Self.app)])
            #expect(rows.status == 200)
            #expect(rows.header("Access-Control-Allow-Origin") == Self.app)
            #expect(rows.header("Access-Control-Expose-Headers") == "X-Session-Id, ETag")
            #expect(rows.header("Vary") == "X-Session-Id, Origin")
            let error = try await client.send("GET", "/rows?limt=2", headers: [("Origin", Self.app)])
            try liveExpectError(error, status: 400, code: "invalid_parameter")
            #expect(error.header("Access-Control-Allow-Origin") == Self.app, "the page may read why it was refused")
        }

        @Test(arguments: ContractTransport.allCases)
        func anOriginNotListedGetsOrdinaryAnswersWithoutAnyGrant(over transport: ContractTransport) async throws {
            let server = try Self.start(transport, origins: [Self.app])
            defer { server.shutdown() }
            let client = server.client()
            for origin in [
                "http://evil.test", "HTTP://APP.TEST:3000", "http://app.test:3001", "http://app.test", "null", ""
            ] {
                let rows = try await client.send("GET", "/count", headers: [("Origin", origin)])
                #expect(rows.status == 200, "\(origin)")
                Self.expectNoGrant(rows)
                #expect(rows.header("Vary") == "X-Session-Id, Origin")
                let write = try await client.send("POST", "/groups/drinks/toggle", headers: [("Origin", origin)])
                #expect(write.status == 200, "a plain request is answered as without CORS: \(origin)")
                Self.expectNoGrant(write)
                let preflight = try await Self.preflight(
                    client, "/groups/drinks/toggle", origin: origin, method: "POST")
                #expect(preflight.status == 204, "\(origin)")
                Self.expectNoGrant(preflight)
            }
            let page = try await client.send("GET", "/", headers: [("Origin", "http://evil.test")])
            #expect(page.status == 200)
            Self.expectNoGrant(page)
            #expect(page.header("Vary") == "Origin")
        }

        @Test(arguments: ContractTransport.allCases)
        func aListedOriginIsRefusedAMethodTheRouteDoesNotTakeOrAHeaderTheAPIDoesNotRead(
            over transport: ContractTransport
        ) async throws {
            let server = try Self.start(transport, origins: [Self.app])
            defer { server.shutdown() }
            let client = server.client()
            for (path, method, headers) in [
                ("/rows", "DELETE", nil), ("/groups/drinks/toggle", "PUT", nil), ("/rows", "GET", "x-custom"),
                ("/rows", "GET", "x-session-id, authorization"), ("/rows", "GET", "a b"), ("/rows", "get", nil),
                ("/rows", "", nil), ("/rows", "G T", nil)
            ] as [(String, String, String?)] {
                let response = try await Self.preflight(
                    client, path, origin: Self.app, method: method, headers: headers)
                #expect(response.status == 204, "\(method) \(path) \(headers ?? "")")
                Self.expectNoGrant(response)
            }
        }

        @Test(arguments: ContractTransport.allCases)
        func starLetsAnyOriginReadButNotWriteWhileAListedOriginMayWrite(over transport: ContractTransport) async throws
        {
            let server = try Self.start(transport, origins: ["*", Self.app])
            defer { server.shutdown() }
            let client = server.client()
            let read = try await Self.preflight(
                client, "/rows", origin: Self.other, method: "GET", headers: "X-Session-Id")
            #expect(read.header("Access-Control-Allow-Origin") == "*")
            #expect(read.header("Access-Control-Allow-Methods") == "GET, HEAD")
            for (path, method) in [
                ("/groups/drinks/toggle", "POST"), ("/groups/drinks/expansion", "PUT"), ("/sessions", "POST")
            ] {
                let refused = try await Self.preflight(
                    client, path, origin: Self.other, method: method, headers: "content-type")
                #expect(refused.status == 204)
                Self.expectNoGrant(refused)
                let listed = try await Self.preflight(
                    client, path, origin: Self.app, method: method, headers: "content-type")
                #expect(listed.header("Access-Control-Allow-Origin") == Self.app, "\(method) \(path)")
            }
            let rows = try await client.send("GET", "/count", headers: [("Origin", Self.other)])
            #expect(rows.header("Access-Control-Allow-Origin") == "*")
            #expect(rows.header("Access-Control-Expose-Headers") == "X-Session-Id, ETag")
            let write = try await client.send("POST", "/groups/drinks/toggle", headers: [("Origin", Self.other)])
            #expect(write.status == 200, "a plain write is answered; the browser keeps the answer from the page")
            Self.expectNoGrant(write)
        }

        @Test(arguments: ContractTransport.allCases)
        func withoutCORSOriginsAPreflightIs405AndNoAnswerNamesCORS(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let preflight = try await Self.preflight(client, "/rows", origin: Self.app, method: "GET")
            try liveExpectError(preflight, status: 405, code: "method_not_allowed")
            #expect(preflight.header("Allow") == "GET, HEAD")
            Self.expectNoGrant(preflight)
            let rows = try await client.send("GET", "/count", headers: [("Origin", Self.app)])
            Self.expectNoGrant(rows)
            #expect(rows.header("Vary") == "X-Session-Id")
        }

        /// In-process only: URLSession joins repeated headers into one (`a, b`), which matches no
        /// origin either (HostileCORSTests sends two lines over a raw socket).
        @Test
        func twoDifferentOriginHeadersGetNoGrant() async throws {
            let server = try Self.start(.inProcess, origins: [Self.app, Self.other])
            defer { server.shutdown() }
            let client = server.client()
            let rows = try await client.send("GET", "/count", headers: [("Origin", Self.app), ("Origin", Self.other)])
            #expect(rows.status == 200)
            Self.expectNoGrant(rows)
            let same = try await client.send("GET", "/count", headers: [("Origin", Self.app), ("Origin", Self.app)])
            #expect(same.header("Access-Control-Allow-Origin") == Self.app)
        }
    }
}
