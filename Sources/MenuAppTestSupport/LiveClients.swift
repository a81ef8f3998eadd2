// Real clients for a live server: URLSession, and a raw POSIX socket that sends exact bytes.

import Foundation
import HTTPTestSupport
import MenuTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: - URLSession client

/// A client on its own ephemeral URLSession (no cache, no cookies).
package final class LiveHTTPClient: ContractClient {
    package let baseURL: String
    package let session: URLSession

    package init(baseURL: String) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = 20
        session = URLSession(configuration: configuration)
    }

    deinit { session.invalidateAndCancel() }

    package func exchange(
        _ method: String, _ target: String, session sessionID: String?,
        headers: [(String, String)], body: [UInt8]?
    ) async throws -> LiveResponse {
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
        guard let http = response as? HTTPURLResponse else {
            throw LiveError("not an HTTP response for \(method) \(target)")
        }
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
package final class LiveRawConnection {
    private let raw: RawHTTPConnection
    package var port: Int { raw.port }

    package init(port: Int, receiveTimeoutSeconds: Int = 15) throws {
        raw = try RawHTTPConnection(
            port: port, receiveTimeoutSeconds: receiveTimeoutSeconds,
            sendTimeoutSeconds: receiveTimeoutSeconds)
    }

    package func send(_ bytes: [UInt8]) throws { try raw.sendBytes(bytes) }

    /// Sends one request with `Host` and, when there is a body, `Content-Length`.
    package func sendRequest(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [])
        throws
    {
        try raw.sendRequest(method, target, headers: headers, body: body)
    }

    /// Sends one request and reads its response.
    package func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [])
        throws -> LiveResponse
    {
        try sendRequest(method, target, headers: headers, body: body)
        return try readResponse(requestWasHEAD: method == "HEAD")
    }

    /// One whole response (Content-Length, chunked, or read to close).
    package func readResponse(requestWasHEAD: Bool = false) throws -> LiveResponse {
        let response = try raw.readResponse(requestWasHEAD: requestWasHEAD)
        guard response.version == "HTTP/1.1" else {
            throw LiveError("bad status line \(response.head.prefix { $0 != "\r" })")
        }
        return LiveResponse(
            status: response.status, headers: response.headers, body: response.body, head: response.head)
    }

    /// True when the server has closed the connection (end of stream within `seconds`, a bound on
    /// the wait), with no further bytes.
    package func isClosedByPeer(within seconds: Int = 30) -> Bool { raw.isClosedByPeer(within: seconds) }

    /// True when the server has neither answered nor closed so far (never waits).
    package var isOpenAndSilent: Bool { raw.isOpenAndSilent }
}
