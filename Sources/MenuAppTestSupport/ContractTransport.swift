// The HTTP contract written once and run over two transports (as Hummingbird's `.router` and
// `.live`): a request value handed to the service in this process, and real HTTP to the started
// app. A contract test takes a `ContractTransport` argument and runs once over each.

import Foundation
import HTTPCore
import MenuApp
import MenuService
import MenuTestSupport
import Testing

/// How a contract test reaches the API. Both transports reach the same app, a `RunningServer`
/// started with the live tests' settings, so one test body states the contract for both.
package enum ContractTransport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A request value handed to the started app's `MenuAPI.respond(to:)`: no socket, no HTTP
    /// parsing, so a failure over this transport alone is the service's.
    case inProcess
    /// Real HTTP (URLSession) to the app's libmicrohttpd listener on 127.0.0.1, port 0.
    case live

    package var testDescription: String { rawValue }

    /// Starts a `RunningServer` (settings changed by `configure`) to be reached over this transport.
    /// Stop it with `shutdown()` in a `defer`.
    package func start(configure: (inout ServerSettings) -> Void = { _ in }) throws -> ContractServer {
        ContractServer(transport: self, live: try LiveServer(configure: configure))
    }

    /// Each transport paired with each of `cases`: the first argument of a contract test that
    /// takes two more (Swift Testing combines at most two argument collections).
    package static func each<Cases: Collection>(_ cases: Cases) -> [(ContractTransport, Cases.Element)]
    where Cases.Element: Sendable {
        allCases.flatMap { transport in cases.map { (transport, $0) } }
    }
}

/// A started `RunningServer` and the transport its tests reach it over.
package final class ContractServer: Sendable {
    package let transport: ContractTransport
    package let live: LiveServer
    /// The app itself, for what a test checks beside the answers (its store, its settings).
    package var server: RunningServer { live.server }

    package init(transport: ContractTransport, live: LiveServer) {
        self.transport = transport
        self.live = live
    }

    /// A client over the transport.
    package func client() -> any ContractClient {
        switch transport {
        case .inProcess: InProcessClient(service: server.service)
        case .live: live.client()
        }
    }

    package func shutdown() { live.shutdown() }
}

/// One way of sending a request and reading its answer; the contract tests' verbs on top.
package protocol ContractClient: Sendable {
    /// Sends `method target` (with `X-Session-Id: sessionID` when given, and `body` as JSON when
    /// given) and returns the answer.
    func exchange(
        _ method: String, _ target: String, session sessionID: String?,
        headers: [(String, String)], body: [UInt8]?
    ) async throws -> LiveResponse
}

extension ContractClient {
    package func send(
        _ method: String, _ target: String, session sessionID: String? = nil,
        headers: [(String, String)] = [], body: [UInt8]? = nil
    ) async throws -> LiveResponse {
        try await exchange(method, target, session: sessionID, headers: headers, body: body)
    }

    package func get(_ target: String, session: String? = nil) async throws -> LiveResponse {
        try await send("GET", target, session: session)
    }

    package func toggle(_ id: String, session: String? = nil) async throws -> LiveResponse {
        try await send("POST", "/groups/\(id)/toggle", session: session)
    }

    package func setExpansion(_ id: String, _ isExpanded: Bool, session: String? = nil) async throws -> LiveResponse {
        try await send(
            "PUT", "/groups/\(id)/expansion", session: session, body: Array("{\"isExpanded\":\(isExpanded)}".utf8))
    }

    /// POST /sessions, checked, returning the new id.
    package func newSession(sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let response = try await send("POST", "/sessions")
        #expect(response.status == 201, "\(response)", sourceLocation: sourceLocation)
        let id = try response.decode(LiveSessionBody.self, sourceLocation: sourceLocation).sessionId
        #expect(liveIsSessionID(id), sourceLocation: sourceLocation)
        return id
    }
}

/// Hands each request to a `MenuAPI` as a value. The target is split into path and query
/// arguments and percent-decoded as the live listener does; the answer gets the one header the
/// HTTP layer adds to every response, `Content-Length` (the body's size).
package struct InProcessClient: ContractClient {
    package let service: MenuAPI

    package func exchange(
        _ method: String, _ target: String, session sessionID: String?,
        headers: [(String, String)], body: [UInt8]?
    ) async throws -> LiveResponse {
        var fields = headers.map { (name: $0.0, value: $0.1) }
        if let sessionID { fields.append((name: "X-Session-Id", value: sessionID)) }
        if body != nil { fields.append((name: "Content-Type", value: "application/json")) }
        let (path, query) = try Self.split(target)
        let response = service.respond(
            to: HTTPRequest(
                method: method, path: path, query: query, headers: fields,
                body: body ?? []))
        let body = response.body
        return LiveResponse(
            status: response.status,
            headers: response.headers + [(name: "Content-Length", value: String(body.count))], body: body)
    }

    /// `/path?a=1&b` as the path and the arguments `a=1` and `b` (no value), percent-decoded.
    package static func split(_ target: String) throws -> (path: String, query: [(name: String, value: String?)]) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = try decoded(parts[0])
        guard parts.count == 2, !parts[1].isEmpty else { return (path, []) }
        let query = try parts[1].split(separator: "&").map { argument -> (name: String, value: String?) in
            let pair = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (try decoded(pair[0]), try pair.count == 2 ? decoded(pair[1]) : nil)
        }
        return (path, query)
    }

    /// `%XX` escapes replaced by their bytes, read as UTF-8 (an invalid sequence as U+FFFD).
    private static func decoded(_ text: Substring) throws -> String {
        var bytes: [UInt8] = []
        var rest = Array(text.utf8)[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else {
                throw LiveError("bad percent escape in \(text)")
            }
            bytes.append(value)
            rest = rest.dropFirst(2)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
