import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a client talks to a menu-server: the base URL, the request timeout, the language and how
/// it waits out a server that is briefly unavailable.
public struct MenuClientConfiguration: Sendable {
    public var baseURL: URL
    /// Seconds a request may take before it fails with ``MenuClientError/transport(_:)``.
    public var timeout: TimeInterval = 15
    /// The titles' language: sent as `Accept-Language` on every request (a BCP 47 tag such as
    /// `zh-Hant`, or a whole list with q-values); nil sends `*`, which the server answers in the
    /// menu's default locale (without a header of its own, URLSession would send the process's
    /// languages). One client keeps one language, so its ETags stay of one locale.
    public var language: String?
    /// How a `503` (the server's session store briefly unreachable) is sent again.
    public var unavailableRetry = MenuRetryPolicy()
    public init(
        baseURL: URL, timeout: TimeInterval = 15, language: String? = nil,
        unavailableRetry: MenuRetryPolicy = MenuRetryPolicy()
    ) {
        self.baseURL = baseURL
        self.timeout = timeout
        self.language = language
        self.unavailableRetry = unavailableRetry
    }
}

/// How often, and after how long, a request answered `503 Service Unavailable` is sent again: up
/// to ``retries`` more times, the n-th after ``initialBackoff`` · 2ⁿ⁻¹ seconds, or the answer's
/// `Retry-After` when that is longer, never more than ``maxBackoff``. Only the last answer is
/// returned. A write goes again with its `If-Match`, so one the server applied before answering
/// 503 is refused (412) and resolved as a lost answer is, never applied twice.
public struct MenuRetryPolicy: Sendable, Hashable {
    public var retries: Int
    public var initialBackoff: TimeInterval
    public var maxBackoff: TimeInterval

    public init(retries: Int = 4, initialBackoff: TimeInterval = 0.25, maxBackoff: TimeInterval = 4) {
        self.retries = max(0, retries)
        self.initialBackoff = max(0, initialBackoff)
        self.maxBackoff = max(0, maxBackoff)
    }

    /// The seconds to wait before retry `attempt` (1 for the first) after an answer asking for
    /// `retryAfter` seconds (nil: it did not say).
    func delay(beforeRetry attempt: Int, retryAfter: Int?) -> TimeInterval {
        let backoff = initialBackoff * Double(1 << min(attempt - 1, 30))
        return min(maxBackoff, max(backoff, Double(retryAfter ?? 0)))
    }
}

/// One answer as received: status, headers by lowercased name, body.
struct MenuHTTPAnswer: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data

    func decode<T: Decodable>(_ type: T.Type) throws(MenuClientError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch {
            throw .unexpectedAnswer(
                status: status,
                detail: "cannot read \(T.self) from \(String(decoding: body.prefix(300), as: UTF8.self)): \(error)")
        }
    }

    /// The server's error as thrown: status, code, message and the extras it carries.
    var error: MenuClientError {
        guard let answer = try? JSONDecoder().decode(MenuErrorAnswer.self, from: body) else {
            return .unexpectedAnswer(
                status: status, detail: "no error body: \(String(decoding: body.prefix(300), as: UTF8.self))")
        }
        return .server(
            status: status, code: answer.error.code, message: answer.error.message, revision: answer.revision,
            path: answer.error.path, retryAfterSeconds: headers["retry-after"].flatMap { Int($0) })
    }
}

/// The HTTP side of the client: one URLSession with no cache (revalidation is the client's own,
/// by `If-None-Match`: with a URL cache, URLSession would answer a 304 from it as a 200), cookies
/// off and a timeout; pipelining stays off (the default; the setting itself is deprecated).
/// Sendable; no state of its own.
struct MenuHTTP: Sendable {
    let configuration: MenuClientConfiguration
    let session: URLSession

    init(configuration: MenuClientConfiguration) {
        self.configuration = configuration
        session = URLSession(configuration: Self.settings(timeout: configuration.timeout))
    }

    /// The client's URLSession settings (ephemeral, no cache, no cookies), a request failing after
    /// `timeout` seconds without a byte.
    static func settings(timeout: TimeInterval) -> URLSessionConfiguration {
        let settings = URLSessionConfiguration.ephemeral
        settings.urlCache = nil
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        settings.httpShouldSetCookies = false
        settings.timeoutIntervalForRequest = timeout
        return settings
    }

    /// Sends one request; any status comes back as an answer, only a failed exchange throws. A
    /// `503` is sent again as ``MenuClientConfiguration/unavailableRetry`` says.
    func send(
        _ method: String, _ path: String, query: [(String, String)] = [], headers: [(String, String)] = [],
        json body: Data? = nil
    ) async throws(MenuClientError) -> MenuHTTPAnswer {
        let policy = configuration.unavailableRetry
        var answer = try await sendOnce(method, path, query: query, headers: headers, json: body)
        var attempt = 1
        while answer.status == 503, attempt <= policy.retries {
            let delay = policy.delay(
                beforeRetry: attempt, retryAfter: answer.headers["retry-after"].flatMap { Int($0) })
            do { try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000)) } catch { break }  // cancelled: the last answer
            answer = try await sendOnce(method, path, query: query, headers: headers, json: body)
            attempt += 1
        }
        return answer
    }

    /// One exchange.
    private func sendOnce(
        _ method: String, _ path: String, query: [(String, String)], headers: [(String, String)],
        json body: Data?
    ) async throws(MenuClientError) -> MenuHTTPAnswer {
        let request = try urlRequest(method, path, query: query, headers: headers, json: body)
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await Self.exchange(request, on: session)
        } catch {
            throw .transport("\(method) /\(path): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw .transport("\(method) /\(path): not an HTTP response")
        }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return MenuHTTPAnswer(status: http.statusCode, headers: fields, body: data)
    }

    /// `session.data(for:)` with a cancellation that cannot deadlock. Foundation's own cancels the
    /// data task from inside the Swift task's cancellation handler, holding the task's status lock,
    /// and waits for the session's work queue; the work queue, delivering the answer at that
    /// moment, waits for the same status lock (swift-corelibs-foundation#5412, in Swift 6.3.1):
    /// every later request of the session then hangs. Here the answer comes through a completion
    /// handler and the cancel is sent from a queue of its own, outside the lock.
    static func exchange(_ request: URLRequest, on session: URLSession) async throws -> (Data, URLResponse) {
        let exchange = Mutex(PendingExchange())
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                let cancelled = exchange.withLock { pending in
                    pending.task = task
                    return pending.cancelled
                }
                task.resume()
                if cancelled { PendingExchange.cancel(task) }
            }
        } onCancel: {
            let task = exchange.withLock { pending in
                pending.cancelled = true
                return pending.task
            }
            if let task { PendingExchange.cancel(task) }
        }
    }

    /// The request for `path` (percent-encoded already) with `query`, the language and `headers`.
    func urlRequest(
        _ method: String, _ path: String, query: [(String, String)], headers: [(String, String)],
        json body: Data? = nil
    ) throws(MenuClientError) -> URLRequest {
        // `path` is percent-encoded already (``segment(_:)``): joined as it is, never encoded again.
        guard var components = URLComponents(url: configuration.baseURL, resolvingAgainstBaseURL: false)
        else { throw .invalidArgument("cannot build a URL from \(configuration.baseURL) and \(path)") }
        let base =
            components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        components.percentEncodedPath = base + "/" + path
        // Every byte outside the unreserved set encoded (URLQueryItem leaves `+`, which the server
        // reads as a space, and may leave `&` and `=`): a search for `C++ & co` arrives as typed.
        if !query.isEmpty {
            components.percentEncodedQuery = query.map { Self.segment($0.0) + "=" + Self.segment($0.1) }.joined(
                separator: "&")
        }
        guard let url = components.url else { throw .invalidArgument("cannot build a URL from \(components)") }
        var request = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: configuration.timeout)
        request.httpMethod = method
        request.setValue(configuration.language ?? "*", forHTTPHeaderField: "Accept-Language")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    /// `id` as one path segment: every byte outside `A-Z a-z 0-9 . _ ~ -` percent-encoded, so an
    /// id a person typed (`a/b`, `x?y`, `50%`) reaches the server as that id (which then names no
    /// node: every node id is of those characters) instead of another path. The same encoding
    /// serves each query name and value.
    static func segment(_ id: String) -> String {
        var text = ""
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                UInt8(ascii: "0") ... UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "-"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                text += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return text
    }

    /// The strong tag `"<version>-<revision>"` the server sends on `/rows` and `/count` (docs/api.md,
    /// "Revisions and conditional requests": the version percent-encoded outside `A-Z a-z 0-9 . _ ~`),
    /// `"<version>-<locale>-<revision>"` for a menu with locales (`locale` its Content-Language).
    static func entityTag(version: String, locale: String? = nil, availability: Int = 0, revision: Int) -> String {
        var text = "\""
        for byte in version.utf8 {
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                UInt8(ascii: "0") ... UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                text += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        if let locale { text += "-" + locale }
        if availability > 0 { text += "-a\(availability)" }
        return text + "-\(revision)\""
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// One exchange's data task and whether its Swift task was cancelled, whichever came first.
struct PendingExchange: Sendable {
    var task: URLSessionDataTask?
    var cancelled = false

    static let cancels = DispatchQueue(label: "MenuHTTP.cancels")

    /// Cancels `task` from ``cancels``, never from inside a cancellation handler (see
    /// ``MenuHTTP/exchange(_:on:)``); ``MenuEventStream`` ends its streams from there too.
    static func cancel(_ task: URLSessionDataTask) {
        cancels.async { task.cancel() }
    }
}
