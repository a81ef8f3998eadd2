// Every error answer (status, code, JSON body and headers), written once and run over both
// transports: a request value to the started app's MenuAPI, and URLSession against its
// listener. The errors only the HTTP layer gives (413) are LiveBodyLimitTests.

import Foundation
import MenuApp
import MenuAppTestSupport
import MenuService
import MenuServiceTestSupport
import MenuSessions
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AppTests {
    @Suite("Contract: errors answer the contract in-process and over real HTTP")
    struct ContractErrorTests {

        // MARK: 400 invalid_parameter

        static let badRowQueries = [
            "offset=-1", "offset=abc", "offset=1.5", "offset=1e2", "offset=+1", "offset=%201", "offset=1%20",
            "offset=0x10", "offset=99999999999999999999", "offset=9223372036854775808", "offset=1&offset=1",
            "offset=1&offset=2", "offset=", "offset",
            "limit=0", "limit=501", "limit=-5", "limit=1.0", "limit=5e1", "limit=abc", "limit=10&limit=10",
            "limit=", "limit", "limit=99999999999999999999", "limit=%EF%BC%91", "offset=%22%5C%0A", "limit=%FF",
            "limit=0x10"
        ]

        @Test(arguments: ContractTransport.allCases, badRowQueries)
        func badOffsetOrLimitIs400InvalidParameter(over transport: ContractTransport, query: String) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let response = try await server.client().get("/rows?\(query)")
            try liveExpectError(response, status: 400, code: "invalid_parameter")
            let name = query.hasPrefix("offset") ? "offset" : "limit"
            #expect(try response.decode(LiveErrorBody.self).error.message.contains(name), "\(response)")
        }

        @Test(arguments: ContractTransport.allCases)
        func offsetBeyondInt32IsStillAnOffsetPastTheEnd(over transport: ContractTransport) async throws {
            // The contract: offset is any integer >= 0, and offset >= count gives rows [].
            let server = try transport.start()
            defer { server.shutdown() }
            let response = try await server.client().get("/rows?offset=2147483648")
            #expect(response.status == 200, "\(response)")
            #expect(response.text.contains("\"rows\":[]"), "\(response)")
        }

        // MARK: 400 invalid_session / 404 unknown_session

        enum SessionUse: String, CaseIterable, Sendable {
            case rows, count, toggle, put, read, delete

            func send(_ client: any ContractClient, session: String) async throws -> LiveResponse {
                switch self {
                case .rows: try await client.get("/rows", session: session)
                case .count: try await client.get("/count", session: session)
                case .read: try await client.get("/session", session: session)
                case .delete: try await client.send("DELETE", "/session", session: session)
                case .toggle: try await client.toggle("beer", session: session)
                case .put: try await client.setExpansion("beer", false, session: session)
                }
            }
        }

        static let malformedSessionIDs = [
            "abc", "AAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAA!",
            "AAAAAAAAAAAAAAAAAAAA==", "AAAAAAAAAAAAAAAAAAAA+/", "AAAAAAAAAA AAAAAAAAAAA"
        ]

        @Test(arguments: ContractTransport.each(SessionUse.allCases), malformedSessionIDs)
        func malformedSessionHeaderIs400InvalidSession(over pair: (ContractTransport, SessionUse), session: String)
            async throws
        {
            let (transport, use) = pair
            let server = try transport.start()
            defer { server.shutdown() }
            let response = try await use.send(server.client(), session: session)
            try liveExpectError(response, status: 400, code: "invalid_session")
            #expect(response.header("X-Session-Id") == nil)
        }

        @Test(arguments: ContractTransport.allCases, ["GET", "HEAD", "DELETE"])
        func aSessionRouteWithoutTheHeaderIs400MissingSession(over transport: ContractTransport, method: String)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let response = try await server.client().send(method, "/session")
            #expect(response.status == 400)
            if method != "HEAD" { try liveExpectError(response, status: 400, code: "missing_session") }
            #expect(response.header("X-Session-Id") == nil)
        }

        @Test(arguments: ContractTransport.allCases, SessionUse.allCases)
        func wellFormedUnknownSessionIs404UnknownSession(over transport: ContractTransport, use: SessionUse)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            for session in ["AAAAAAAAAAAAAAAAAAAAAA", "q3Vx9TzL0bA-7kWmYp2R_g", "____________________-w"] {
                let response = try await use.send(client, session: session)
                try liveExpectError(response, status: 404, code: "unknown_session")
            }
        }

        @Test(arguments: ContractTransport.allCases)
        func sessionIdWhoseLastCharacterCarriesMoreThan128BitsIsMalformed(over transport: ContractTransport)
            async throws
        {
            // openapi.yaml: SessionId is `^[A-Za-z0-9_-]{21}[AQgw]$` (128 bits; no aliases).
            let server = try transport.start()
            defer { server.shutdown() }
            let malformed = try await server.client().get("/count", session: "AAAAAAAAAAAAAAAAAAAAAB")
            try liveExpectError(malformed, status: 400, code: "invalid_session")
            let wellFormed = try await server.client().get("/count", session: "AAAAAAAAAAAAAAAAAAAAAQ")
            try liveExpectError(wellFormed, status: 404, code: "unknown_session")
        }

        @Test(arguments: ContractTransport.allCases)
        func expiredSessionIs404UnknownSession(over transport: ContractTransport) async throws {
            let server = try transport.start { $0.sessionTTLSeconds = 1 }
            defer { server.shutdown() }
            let client = server.client()
            // Nothing here depends on how fast the machine is: the session is known to be stored with
            // the 1 s idle limit (whether it is still fresh when asked depends on the machine, so that
            // is checked with a clock moved by hand, in InMemoryExpiryTests); then, after a sleep that
            // is at least longer than that limit, reads and writes find it expired.
            let store = try #require(server.server.service.store as? InMemorySessionStore)
            #expect(store.timeToLive == .seconds(1), "--session-ttl did not reach the store")
            let session = try await client.newSession()
            #expect(store.count == 1, "POST /sessions stored no session")
            try await Task.sleep(for: .milliseconds(1_300))
            try liveExpectError(try await client.get("/count", session: session), status: 404, code: "unknown_session")
            try liveExpectError(try await client.toggle("beer", session: session), status: 404, code: "unknown_session")
        }

        @Test(arguments: ContractTransport.allCases)
        func failedWritesWithoutSessionCreateNoSession(over transport: ContractTransport) async throws {
            // With room for one session only, failed session-less writes must not use it up.
            let server = try transport.start { $0.maxSessions = 1 }
            defer { server.shutdown() }
            let client = server.client()
            try liveExpectError(try await client.toggle("desserts"), status: 404, code: "unknown_group")
            try liveExpectError(try await client.toggle("mapo-tofu"), status: 409, code: "not_a_group")
            try liveExpectError(try await client.setExpansion("desserts", true), status: 404, code: "unknown_group")
            try liveExpectError(
                try await client.send("PUT", "/groups/beer/expansion", body: Array("{}".utf8)),
                status: 400, code: "invalid_body")
            let created = try await client.toggle("beer")
            #expect(created.status == 200, "\(created)")
            // The store is now full, which proves the limit really was one session.
            let full = try await client.send("POST", "/sessions")
            #expect(full.status == 429, "\(full)")
            // Deleting frees the place again.
            let session = try created.decode(LiveChange.self).sessionId
            #expect(try await client.send("DELETE", "/session", session: session).status == 204)
            #expect(try await client.send("POST", "/sessions").status == 201)
        }

        // MARK: 404 unknown_group, 409 not_a_group

        @Test(
            arguments: ContractTransport.each(SessionUse.allCases.filter { $0 == .toggle || $0 == .put }),
            ["desserts", "nope", "Main-Courses", "main-courses-x", "%E4%B8%BB%E8%8F%9C", "a%22b%5Cc"])
        func unknownGroupIs404UnknownGroup(over pair: (ContractTransport, SessionUse), group: String) async throws {
            let (transport, use) = pair
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let response =
                switch use {
                case .toggle: try await client.toggle(group)
                default: try await client.setExpansion(group, true)
                }
            try liveExpectError(response, status: 404, code: "unknown_group")
            #expect(response.header("X-Session-Id") == nil)
        }

        @Test(arguments: ContractTransport.allCases, ["mapo-tofu", "snow-beer", "zhuyeqing-tea"])
        func rowIdIs409NotAGroup(over transport: ContractTransport, row: String) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            try liveExpectError(try await client.toggle(row, session: session), status: 409, code: "not_a_group")
            try liveExpectError(
                try await client.setExpansion(row, false, session: session), status: 409, code: "not_a_group")
            // Nothing changed in the session.
            let count = try await client.get("/count", session: session).decode(LiveCount.self)
            #expect(count.count == 30)
        }

        // MARK: 400 invalid_body

        static let badBodies = [
            "", "not json", "{}", #"{"expanded":true}"#, #"{"isExpanded":"true"}"#, #"{"isExpanded":1}"#,
            #"{"isExpanded":null}"#, #"{"isExpanded":[true]}"#, "[true]", "true", #"{"isExpanded":true"#,
            #"{"isExpanded":tru}"#, String(repeating: "[", count: 10_000)
        ]

        @Test(arguments: ContractTransport.allCases, badBodies)
        func badExpansionBodyIs400InvalidBody(over transport: ContractTransport, body: String) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            let response = try await client.send(
                "PUT", "/groups/beer/expansion", session: session, body: Array(body.utf8))
            try liveExpectError(response, status: 400, code: "invalid_body")
            let count = try await client.get("/count", session: session).decode(LiveCount.self)
            #expect(count.count == 30)
        }

        @Test(arguments: ContractTransport.allCases)
        func badExpansionBodyWithoutSessionCreatesNoSession(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let response = try await server.client().send("PUT", "/groups/beer/expansion", body: Array("{}".utf8))
            try liveExpectError(response, status: 400, code: "invalid_body")
            #expect(response.header("X-Session-Id") == nil)
        }

        // MARK: 404 not_found

        static let unknownPaths = [
            "//", "/nope", "/rows/", "/rows/extra", "/ROWS", "/count.json", "/healthz/", "/groups", "/groups/beer",
            "/groups/beer/toggle/extra", "/groups//toggle", "/groups/beer/expand", "/sessions/", "/session/",
            "/Session",
            "/menus?offset=1", "/%22quote%5Cbackslash%0Anewline%01", "/%FF%FE", "/%E4%B8%BB%E8%8F%9C",
            "/groups/x/open", "//rows"
        ]

        @Test(arguments: ContractTransport.allCases, unknownPaths)
        func unknownPathIs404NotFound(over transport: ContractTransport, path: String) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            for method in ["GET", "POST"] {
                let response = try await client.send(method, path)
                try liveExpectError(response, status: 404, code: "not_found")
                #expect(response.header("Allow") == nil)
            }
        }

        // MARK: 405 method_not_allowed

        struct WrongMethod: Sendable, CustomTestStringConvertible {
            var method: String
            var path: String
            var allowed: [String]
            var testDescription: String { "\(method) \(path)" }
        }

        static let wrongMethods = [
            WrongMethod(method: "POST", path: "/rows", allowed: ["GET", "HEAD"]),
            WrongMethod(method: "DELETE", path: "/rows?offset=1", allowed: ["GET", "HEAD"]),
            WrongMethod(method: "PUT", path: "/count", allowed: ["GET", "HEAD"]),
            WrongMethod(method: "PATCH", path: "/healthz", allowed: ["GET", "HEAD"]),
            WrongMethod(method: "GET", path: "/sessions", allowed: ["POST"]),
            WrongMethod(method: "DELETE", path: "/sessions", allowed: ["POST"]),
            WrongMethod(method: "POST", path: "/session", allowed: ["GET", "HEAD", "DELETE"]),
            WrongMethod(method: "GET", path: "/groups/beer/toggle", allowed: ["POST"]),
            WrongMethod(method: "PUT", path: "/groups/beer/toggle", allowed: ["POST"]),
            WrongMethod(method: "GET", path: "/groups/beer/expansion", allowed: ["PUT"]),
            WrongMethod(method: "POST", path: "/groups/beer/expansion", allowed: ["PUT"]),
            WrongMethod(method: "OPTIONS", path: "/rows", allowed: ["GET", "HEAD"]),
            WrongMethod(method: "PUT", path: "/session", allowed: ["GET", "HEAD", "DELETE"])
        ]

        @Test(arguments: ContractTransport.allCases, wrongMethods)
        func otherMethodOnKnownPathIs405WithAllow(over transport: ContractTransport, wrong: WrongMethod) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let response = try await server.client().send(wrong.method, wrong.path)
            try liveExpectError(response, status: 405, code: "method_not_allowed")
            let allow = try #require(response.header("Allow"), "\(response)")
            #expect(
                allow.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } == wrong.allowed, "\(allow)"
            )
            #expect(allow == wrong.allowed.joined(separator: ", "))
        }
    }
}
