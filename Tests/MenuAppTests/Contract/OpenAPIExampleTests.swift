import Foundation
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
    /// `openapi.yaml`'s examples are what a real server answers, and its error codes are exactly the
    /// ones the service produces, both ways.
    ///
    /// Each response example names the request that produces it (`x-request`: method, target,
    /// optional `headers` as name-value pairs, `body`, or `contentLength` to send only a head
    /// declaring that length, `before`: requests sent first in
    /// the same session, `settings` of the server), the status (`x-status`) and the headers it must
    /// carry (`x-headers`). An error no request alone can cause names the test that causes it
    /// (`x-produced-by`). The session id `q3Vx9TzL0bA-7kWmYp2R_g` in an example stands for the session
    /// the request used or created (in a header too: `GET /session` names the `before`'s session).
    @Suite(.serialized) struct OpenAPIExampleTests {
        static let sessionPlaceholder = "q3Vx9TzL0bA-7kWmYp2R_g"

        /// One value of every `APIError` case: the rows of the both-ways check. A new case makes
        /// `everyAPIErrorCaseHasASample` fail until it has a row here, and the code must then be in the
        /// `ErrorCode` schema with an example that a request produces. (Computed, not a stored
        /// static: LeakSanitizer cannot see the array inside an enum payload with tag bits in its
        /// pointer, and would report a stored one as leaked.)
        static var samples: [APIError] {
            [
                .invalidParameter("x"), .invalidBody("x"), .invalidQuery("x"), .invalidFilter("x"), .invalidSession,
                .missingSession, .sessionInPath, .unknownSession,
                .unknownGroup(id: "x"), .unknownNode(id: "x"), .hiddenNode(id: "x", group: true),
                .notVisible(id: "x", path: []), .notAGroup(id: "x"),
                .selectionAboveMaximum(groupID: "x", max: 1, selected: 2), .unavailableNode(id: "x", state: "paused"),
                .notFound(path: "/x"), .methodNotAllowed(method: "PATCH", allowed: ["GET"]),
                .payloadTooLarge(limit: 1), .badRequest("x"), .notImplemented("x"),
                .tooManySessions(limit: 1, retryAfterSeconds: 1),
                .unavailable("x"), .stopping, .tooManyStreams(limit: 1), .tooManyStreamsFromAddress(limit: 1),
                .searchBusy(builds: 1),
                .instantBusy(builds: 1),
                .tooManyChanges(limit: 1),
                .rateLimited(perMinute: 1, retryAfterSeconds: 1),
                .preconditionFailed(revision: 1), .gone(since: 1, revision: 2), .sessionTooLarge(limit: 1),
                .sessionMemoryFull(budget: 1, retryAfterSeconds: 1)
            ]
        }

        /// The case's name, e.g. `invalidSession` or `unknownGroup`.
        static func caseName(_ error: APIError) -> String {
            Mirror(reflecting: error).children.first?.label ?? String(describing: error)
        }

        /// The cases `APIError.swift` declares (`    case name` lines before its first property).
        static func declaredCases() throws -> Set<String> {
            let source = try String(
                contentsOf: repositoryRoot.appendingPathComponent("Sources/MenuService/APIError.swift"), encoding: .utf8
            )
            let body = source.components(separatedBy: "public var status")[0]
            return Set(
                body.split(separator: "\n").filter { $0.hasPrefix("    case ") }.map {
                    String($0.dropFirst(9).prefix { $0.isLetter || $0.isNumber })
                })
        }

        @Test func everyAPIErrorCaseHasASample() throws {
            #expect(Set(Self.samples.map(Self.caseName)) == (try Self.declaredCases()))
        }

        @Test func theErrorCodeSchemaListsExactlyTheCodesTheServiceAnswersWithTheirStatus() throws {
            let document = try OpenAPIDocument()
            #expect(Set(document.errorCodes()) == Set(Self.samples.map(\.code)))
            let description = document.errorCodeDescription()
            for sample in Self.samples {
                #expect(
                    description.contains("`\(sample.code)` (\(sample.status)"),
                    "ErrorCode's description lacks `\(sample.code)` (\(sample.status)")
            }
        }

        @Test func everyRouteIncludingHEADIsDocumentedWithExactlyTheQueryParametersItTakes() throws {
            let documented = try OpenAPIDocument().queryParameters()
            let served = Dictionary(
                uniqueKeysWithValues: Endpoint.methodRoutes.map {
                    ("\($0.method) \($0.route.template)", Set($0.route.query.map { "\($0)" }))
                })
            #expect(documented == served)
        }

        @Test func infoVersionIsTheServersVersion() throws {
            #expect(try OpenAPIDocument().infoVersion().map { "menu-server \($0)" } == ServerSettings.version)
        }

        @Test
        func everyResponseExampleIsWhatTheServerAnswersAndEveryErrorCodeHasOne() async throws {
            let examples = try OpenAPIDocument().responseExamples()
            #expect(examples.count >= 20, "\(examples.map(\.name))")
            var servers: [String: LiveServer] = [:]
            defer { servers.values.forEach { $0.shutdown() } }
            var produced: [String: Int] = [:]  // error code: status
            for example in examples {
                let name = example.path.joined(separator: "/")
                if example.members["$ref"] != nil { continue }  // checked where it is defined
                guard let value = try example.json("value") else {
                    Issue.record("\(name) has no value")
                    continue
                }
                let code = ((value as? [String: Any])?["error"] as? [String: Any])?["code"] as? String
                if let producer = example.members["x-produced-by"] {
                    #expect(!producer.isEmpty)
                    if let code { produced[code] = Self.samples.first { $0.code == code }?.status }
                    continue
                }
                guard let request = try example.json("x-request") as? [String: Any],
                    let status = try example.json("x-status") as? Int
                else {
                    Issue.record("\(name) names no x-request and x-status (nor x-produced-by)")
                    continue
                }
                let settings = request["settings"] as? [String: Int] ?? [:]
                let key = settings.sorted { $0.key < $1.key }.description
                if servers[key] == nil {
                    servers[key] = try LiveServer {
                        if let max = settings["maxSessions"] { $0.maxSessions = max }
                        if let max = settings["maxChangedGroups"] { $0.maxChangedGroups = max }
                        if let rate = settings["sessionRatePerMinute"] { $0.sessionRatePerMinute = rate }
                        if let bytes = settings["sessionMemory"] { $0.sessionMemory = bytes }
                    }
                }
                let response = try Self.send(request, to: servers[key]!)
                #expect(response.status == status, "\(name): \(response)")
                liveExpectJSONHeaders(response)
                for (header, expected) in try example.json("x-headers") as? [String: String] ?? [:] {
                    #expect(response.header(header) == expected, "\(name): \(header) in \(response)")
                }
                let expected = try JSONDecoder().decode(LiveJSON.self, from: Data(example.members["value"]!.utf8))
                #expect(response.bodyJSON == expected, "\(name):\n  example \(expected)\n  served  \(response.text)")
                if let code { produced[code] = status }
            }
            for sample in Self.samples {
                #expect(
                    produced[sample.code] == sample.status, "no example produces \(sample.code) with \(sample.status)")
            }
        }

        /// Sends the example's `before` requests and then it, on one connection per request, carrying
        /// the session the first of them got; the answer has that session id replaced by the placeholder.
        static func send(_ request: [String: Any], to server: LiveServer) throws -> LiveResponse {
            var session: String?
            var last: LiveResponse?
            for step in (request["before"] as? [[String: Any]] ?? []) + [request] {
                var headers = (step["headers"] as? [[String]] ?? []).map { ($0[0], $0[1]) }
                if let session, !headers.contains(where: { $0.0.lowercased() == "x-session-id" }) {
                    headers.append(("X-Session-Id", session))
                }
                var (method, target) = (step["method"] as! String, step["target"] as! String)
                if let session { target = target.replacingOccurrences(of: sessionPlaceholder, with: session) }
                let connection = try server.connect()
                let response: LiveResponse
                if let declared = step["contentLength"] as? Int {
                    // Only the head: the server must answer from the declared length alone.
                    let head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(declared)\r\n\r\n"
                    try connection.send(Array(head.utf8))
                    response = try connection.readResponse()
                } else {
                    response = try connection.request(
                        method, target, headers: headers, body: Array((step["body"] as? String ?? "").utf8))
                }
                if session == nil, let issued = response.header("X-Session-Id") { session = issued }
                last = response
            }
            guard var response = last, let session else { return last! }
            response.headers = response.headers.map {
                ($0.name, $0.value.replacingOccurrences(of: session, with: sessionPlaceholder))
            }
            response.body = Array(response.text.replacingOccurrences(of: session, with: sessionPlaceholder).utf8)
            return response
        }
    }
}

extension LiveResponse {
    /// The body as JSON, `.null` when it is none.
    var bodyJSON: LiveJSON { (try? JSONDecoder().decode(LiveJSON.self, from: Data(body))) ?? .null }
}
