// Shared helpers for the live (tier 3) tests: a real menu-server on 127.0.0.1 port 0, in-process
// or as a child process, and real clients for it (URLSession, raw POSIX sockets, curl).
// Every name here starts with `Live` so it cannot clash with helpers of other test files.

import ChildProcess
import Foundation
import HTTPTestSupport
import MenuModel
import MenuApp
import MenuService
import Synchronization
import Testing
import MenuServiceTestSupport
import MenuTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - In-process server

/// A real menu-server (libmicrohttpd) started in this process on 127.0.0.1, port 0.
/// Stop it with `shutdown()` in a `defer`.
final class LiveServer: Sendable {
    let server: RunningServer
    var port: Int { server.port }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    init(configure: (inout ServerSettings) -> Void = { _ in }) throws {
        var settings = ServerSettings()
        settings.port = 0
        settings.host = "127.0.0.1"
        settings.configPath = LivePaths.menuConfig
        configure(&settings)
        do {
            server = try RunningServer(settings: settings)
        } catch {
            throw LiveError("cannot start menu-server: \(error.description)")
        }
    }

    func shutdown() { server.shutdown(gracePeriod: .seconds(5)) }

    /// A URLSession client for this server.
    func client() -> LiveHTTPClient { LiveHTTPClient(baseURL: baseURL) }

    /// A raw TCP connection to this server.
    func connect() throws -> LiveRawConnection { try LiveRawConnection(port: port) }
}

// MARK: - Responses

/// One HTTP response as any of the clients saw it.
struct LiveResponse: Sendable, CustomStringConvertible {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// Status line and header lines exactly as received (raw clients only).
    var head: String = ""

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    func decode<T: Decodable>(_ type: T.Type, sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch {
            Issue.record("cannot decode \(T.self) from \(status) body \(text): \(error)", sourceLocation: sourceLocation)
            throw error
        }
    }

    /// The body as a generic JSON value.
    func json(sourceLocation: SourceLocation = #_sourceLocation) throws -> LiveJSON {
        try decode(LiveJSON.self, sourceLocation: sourceLocation)
    }

    /// The keys of the top-level JSON object.
    func keys(sourceLocation: SourceLocation = #_sourceLocation) throws -> Set<String> {
        guard case .object(let object) = try json(sourceLocation: sourceLocation) else {
            Issue.record("body is not a JSON object: \(text)", sourceLocation: sourceLocation)
            return []
        }
        return Set(object.keys)
    }

    var description: String { "\(status) \(headers.map { "\($0.name): \($0.value)" }) \(text.prefix(300))" }
}

/// What is wrong with a JSON response's caching headers, nil when nothing: a session read (it
/// carries an ETag) is `private, no-cache` and varies by `X-Session-Id`, everything else `no-store`.
func liveCachingProblem(_ response: LiveResponse) -> String? {
    liveCachingProblem(header: response.header, head: response.head)
}

/// ``liveCachingProblem(_:)`` of a response given by its header lookup and its head.
func liveCachingProblem(header: (String) -> String?, head: String) -> String? {
    if header("ETag") != nil {
        // A menu with locales varies by Accept-Language too (ContractLocaleTests).
        guard header("Cache-Control") == "private, no-cache", ["X-Session-Id", "X-Session-Id, Accept-Language"].contains(header("Vary")) else {
            return "a tagged read without Cache-Control: private, no-cache and Vary: X-Session-Id: \(head)"
        }
        return nil
    }
    return header("Cache-Control") == "no-store" ? nil : "no Cache-Control: no-store: \(head)"
}

/// Checks what every JSON response of the service carries: the content type, `no-store` and a
/// `Content-Length` equal to the body's size.
func liveExpectJSONHeaders(_ response: LiveResponse, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.header("Content-Type") == "application/json; charset=utf-8",
            "\(response)", sourceLocation: sourceLocation)
    #expect(liveCachingProblem(response) == nil, sourceLocation: sourceLocation)
    #expect(response.header("Content-Length") != nil, "\(response)", sourceLocation: sourceLocation)
    if let length = response.header("Content-Length") {
        #expect(Int(length) == response.body.count, "\(response)", sourceLocation: sourceLocation)
    }
}

/// Checks an error response field by field: status, JSON headers, `{"error":{"code","message"}}`
/// with exactly those keys and a non-empty message.
func liveExpectError(_ response: LiveResponse, status: Int, code: String, extraKeys: [String] = [],
                 sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(response.status == status, "\(response)", sourceLocation: sourceLocation)
    liveExpectJSONHeaders(response, sourceLocation: sourceLocation)
    #expect(try response.keys(sourceLocation: sourceLocation) == Set(["error"] + extraKeys), sourceLocation: sourceLocation)
    let body = try response.decode(LiveErrorBody.self, sourceLocation: sourceLocation)
    #expect(body.error.code == code, "\(response)", sourceLocation: sourceLocation)
    #expect(!body.error.message.isEmpty, sourceLocation: sourceLocation)
    if case .object(let outer) = try response.json(sourceLocation: sourceLocation),
       case .object(let inner)? = outer["error"] {
        #expect(Set(inner.keys) == ["code", "message"], "\(response)", sourceLocation: sourceLocation)
    }
}

/// True for the 22-character base64url form of a session id.
func liveIsSessionID(_ text: String) -> Bool {
    text.utf8.count == 22 && text.utf8.allSatisfy { byte in
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}

struct LiveRowsPage: Decodable, Sendable {
    var version: String
    var revision: Int
    var count: Int
    var leafCount: Int
    var offset: Int
    var limit: Int
    var rows: [LiveRow]
}

struct LiveCount: Decodable, Equatable, Sendable {
    var version: String
    var count: Int
    var leafCount: Int
}

struct LiveSplice: Decodable, Equatable, Sendable, CustomStringConvertible {
    var at: Int
    var inserted: Int
    var removed: Int
    var description: String { "{at:\(at), inserted:\(inserted), removed:\(removed)}" }
}

struct LiveChange: Decodable, Sendable {
    var version: String
    var revision: Int
    var sessionId: String
    var id: String
    var isExpanded: Bool
    var index: Int?
    var count: Int
    var leafCount: Int
    var change: LiveSplice?
}

struct LiveSessionBody: Decodable, Sendable {
    var sessionId: String
}

struct LiveErrorBody: Decodable, Sendable {
    struct Detail: Decodable, Sendable {
        var code: String
        var message: String
    }
    var error: Detail
}

/// The keys every CHANGE body has, no more.
let liveChangeKeys: Set<String> = ["version", "revision", "sessionId", "id", "isExpanded", "index", "count", "leafCount", "change"]

// MARK: - An independent model of the menu (the test's own oracle)

/// The tests' menu (`LivePaths.menuConfig`) read by the test itself (not through MenuModel) and flattened naively.
struct LiveMenuModel: Sendable {
    struct Node: Sendable {
        var id: String
        var title: String
        var depth: Int
        var children: [Int]?  // nil for rows
        var defaultExpanded: Bool
        var attributes: [String: LiveJSON]?
    }

    var nodes: [Node] = []
    var topLevel: [Int] = []

    static let menu: LiveMenuModel = {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: LivePaths.menuConfig))
            return LiveMenuModel(try JSONDecoder().decode(LiveJSON.self, from: data))
        } catch {
            fatalError("cannot read \(LivePaths.menuConfig): \(error)")
        }
    }()

    init(_ document: LiveJSON) {
        topLevel = (document["items"]?.arrayValue ?? []).map { add($0, depth: 0) }
    }

    private mutating func add(_ item: LiveJSON, depth: Int) -> Int {
        let index = nodes.count
        let items = item["items"]?.arrayValue
        nodes.append(Node(id: item["id"]?.stringValue ?? "", title: item["title"]?.stringValue ?? "", depth: depth,
                          children: items.map { _ in [] }, defaultExpanded: item["expanded"]?.boolValue ?? false,
                          attributes: item["attributes"]?.objectValue))
        if let items {
            let children = items.map { add($0, depth: depth + 1) }
            nodes[index].children = children
        }
        return index
    }

    func node(_ id: String) -> Int? { nodes.firstIndex { $0.id == id } }
    var groupIDs: [String] { nodes.filter { $0.children != nil }.map(\.id) }

    /// One client's expansion state: the config's defaults plus that client's changes.
    struct State: Sendable {
        var expanded: [Bool]
    }

    var defaultState: State { State(expanded: nodes.map(\.defaultExpanded)) }

    /// The visible rows under `state`, as the server should list them.
    func rows(_ state: State) -> [LiveRow] {
        var rows: [LiveRow] = []
        func visit(_ node: Int, parent: String?) {
            let n = nodes[node]
            let row = rows.count
            rows.append(LiveRow(index: row, id: n.id, title: n.title, depth: n.depth, isGroup: n.children != nil,
                                isExpanded: n.children == nil ? nil : state.expanded[node],
                                childCount: n.children?.count, attributes: n.attributes, parentId: parent,
                                visibleDescendantCount: n.children == nil ? nil : 0))
            if let children = n.children, state.expanded[node] {
                for child in children { visit(child, parent: n.id) }
                rows[row].visibleDescendantCount = rows.count - row - 1
            }
        }
        for node in topLevel { visit(node, parent: nil) }
        return rows
    }

    func counts(_ state: State) -> (count: Int, leafCount: Int) {
        let rows = rows(state)
        return (rows.count, rows.filter { !$0.isGroup }.count)
    }

    /// Applies "set `id` to `expanded`" and returns what the server must answer.
    func apply(_ id: String, expanded: Bool, to state: inout State) -> (index: Int?, change: LiveSplice?) {
        guard let node = node(id) else { return (nil, nil) }
        let before = rows(state)
        let wasExpanded = state.expanded[node]
        state.expanded[node] = expanded
        let after = rows(state)
        guard let index = after.firstIndex(where: { $0.id == id }) else { return (nil, nil) }
        if wasExpanded == expanded { return (index, LiveSplice(at: index + 1, inserted: 0, removed: 0)) }
        let delta = after.count - before.count
        return (index, LiveSplice(at: index + 1, inserted: max(delta, 0), removed: max(-delta, 0)))
    }
}

// MARK: - URLSession client

/// A client on its own ephemeral URLSession (no cache, no cookies).
final class LiveHTTPClient: ContractClient {
    let baseURL: String
    let session: URLSession

    init(baseURL: String) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = 20
        session = URLSession(configuration: configuration)
    }

    deinit { session.invalidateAndCancel() }

    func exchange(_ method: String, _ target: String, session sessionID: String?,
                  headers: [(String, String)], body: [UInt8]?) async throws -> LiveResponse {
        guard let url = URL(string: baseURL + target) else { throw LiveError("bad URL \(baseURL + target)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let sessionID { request.setValue(sessionID, forHTTPHeaderField: "X-Session-Id") }
        for (name, value) in headers { request.addValue(value, forHTTPHeaderField: name) }
        if let body {
            request.httpBody = Data(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw LiveError("not an HTTP response for \(method) \(target)") }
        let fields = http.allHeaderFields.compactMap { key, value -> (name: String, value: String)? in
            guard let name = key as? String else { return nil }
            return (name: name, value: "\(value)")
        }
        return LiveResponse(status: http.statusCode, headers: fields, body: Array(data))
    }
}

// MARK: - Raw POSIX socket client

/// One blocking HTTP/1.1 client connection to 127.0.0.1 over a POSIX socket: exact bytes out,
/// exact bytes in, responses as `LiveResponse`. The shared `RawHTTPConnection` with 15 s send and
/// receive timeouts, accepting only `HTTP/1.1` status lines. Used by one thread at a time.
final class LiveRawConnection {
    private let raw: RawHTTPConnection
    var port: Int { raw.port }

    init(port: Int, receiveTimeoutSeconds: Int = 15) throws {
        raw = try RawHTTPConnection(port: port, receiveTimeoutSeconds: receiveTimeoutSeconds,
                                    sendTimeoutSeconds: receiveTimeoutSeconds)
    }

    func send(_ bytes: [UInt8]) throws { try raw.sendBytes(bytes) }

    /// Sends one request with `Host` and, when there is a body, `Content-Length`.
    func sendRequest(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws {
        try raw.sendRequest(method, target, headers: headers, body: body)
    }

    /// Sends one request and reads its response.
    func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> LiveResponse {
        try sendRequest(method, target, headers: headers, body: body)
        return try readResponse(requestWasHEAD: method == "HEAD")
    }

    /// One whole response (Content-Length, chunked, or read to close).
    func readResponse(requestWasHEAD: Bool = false) throws -> LiveResponse {
        let response = try raw.readResponse(requestWasHEAD: requestWasHEAD)
        guard response.version == "HTTP/1.1" else {
            throw LiveError("bad status line \(response.head.prefix { $0 != "\r" })")
        }
        return LiveResponse(status: response.status, headers: response.headers, body: response.body, head: response.head)
    }

    /// True when the server has closed the connection (end of stream within `seconds`, a bound on
    /// the wait), with no further bytes.
    func isClosedByPeer(within seconds: Int = 30) -> Bool { raw.isClosedByPeer(within: seconds) }

    /// True when the server has neither answered nor closed so far (never waits).
    var isOpenAndSilent: Bool { raw.isOpenAndSilent }
}

// MARK: - Child processes

/// The outcome of a finished child process.
struct LiveExit: Sendable {
    var termination: ChildProcess.Termination
    var stdout: String
    var stderr: String

    /// True when the child exited (rather than being killed by a signal).
    var exited: Bool { if case .exited = termination { true } else { false } }
    /// The exit code; -1 when a signal ended the child.
    var status: Int32 { if case .exited(let code) = termination { code } else { -1 } }
}

/// The environment for a child menu-server: this one without any MENU_* variable.
func liveChildEnvironment() -> [String: String] {
    ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MENU_") }
}

/// Runs `executable` with `arguments` to completion (at most `timeoutSeconds`) in the package
/// root, capturing both streams.
func liveRun(_ executable: URL, _ arguments: [String], timeoutSeconds: Double = 30) throws -> LiveExit {
    let outcome = try ChildProcess.run(
        executable: executable.path, arguments: arguments, environment: liveChildEnvironment(),
        workingDirectory: LivePaths.packageRoot.path, timeout: .milliseconds(Int(timeoutSeconds * 1000)))
    guard outcome.exitedOnItsOwn else {
        throw LiveError("\(executable.lastPathComponent) \(arguments) did not exit within \(timeoutSeconds) s")
    }
    return LiveExit(termination: outcome.termination,
                    stdout: String(decoding: outcome.standardOutput, as: UTF8.self),
                    stderr: String(decoding: outcome.standardError, as: UTF8.self))
}

/// A value shared between threads behind a lock.
final class LiveLocked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func set(_ value: Value) { storage.withLock { $0 = value } }
    func update<R: Sendable>(_ body: (inout Value) -> R) -> R { storage.withLock { body(&$0) } }
}
