// One HTTP response as any of the test clients saw it, and the checks every JSON answer of the
// service must pass (headers, error shape, session ids).

import Foundation
import MenuTestSupport
import Testing

/// One HTTP response as any of the clients saw it.
package struct LiveResponse: Sendable, CustomStringConvertible {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]
    /// Status line and header lines exactly as received (raw clients only).
    package var head: String = ""

    package init(status: Int, headers: [(name: String, value: String)], body: [UInt8], head: String = "") {
        self.status = status
        self.headers = headers
        self.body = body
        self.head = head
    }

    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    package func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    package var text: String { String(decoding: body, as: UTF8.self) }

    package func decode<T: Decodable>(_ type: T.Type, sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch {
            Issue.record(
                "cannot decode \(T.self) from \(status) body \(text): \(error)", sourceLocation: sourceLocation)
            throw error
        }
    }

    /// The body as a generic JSON value.
    package func json(sourceLocation: SourceLocation = #_sourceLocation) throws -> LiveJSON {
        try decode(LiveJSON.self, sourceLocation: sourceLocation)
    }

    /// The keys of the top-level JSON object.
    package func keys(sourceLocation: SourceLocation = #_sourceLocation) throws -> Set<String> {
        guard case .object(let object) = try json(sourceLocation: sourceLocation) else {
            Issue.record("body is not a JSON object: \(text)", sourceLocation: sourceLocation)
            return []
        }
        return Set(object.keys)
    }

    package var description: String { "\(status) \(headers.map { "\($0.name): \($0.value)" }) \(text.prefix(300))" }
}

/// What is wrong with a JSON response's caching headers, nil when nothing: a session read (it
/// carries an ETag) is `private, no-cache` and varies by `X-Session-Id`, everything else `no-store`.
package func liveCachingProblem(_ response: LiveResponse) -> String? {
    liveCachingProblem(header: response.header, head: response.head)
}

/// ``liveCachingProblem(_:)`` of a response given by its header lookup and its head.
package func liveCachingProblem(header: (String) -> String?, head: String) -> String? {
    if let tag = header("ETag"), tag.hasSuffix("-menu\"") {
        // `/menu`: the same for every session, revalidated before each use.
        return header("Cache-Control") == "no-cache" ? nil : "/menu without Cache-Control: no-cache: \(head)"
    }
    if header("ETag") != nil {
        // A menu with locales varies by Accept-Language too (ContractLocaleTests).
        guard header("Cache-Control") == "private, no-cache",
            ["X-Session-Id", "X-Session-Id, Accept-Language"].contains(header("Vary"))
        else {
            return "a tagged read without Cache-Control: private, no-cache and Vary: X-Session-Id: \(head)"
        }
        return nil
    }
    return header("Cache-Control") == "no-store" ? nil : "no Cache-Control: no-store: \(head)"
}

/// Checks what every JSON response of the service carries: the content type, `no-store` and a
/// `Content-Length` equal to the body's size.
package func liveExpectJSONHeaders(_ response: LiveResponse, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(
        response.header("Content-Type") == "application/json; charset=utf-8",
        "\(response)", sourceLocation: sourceLocation)
    #expect(liveCachingProblem(response) == nil, sourceLocation: sourceLocation)
    #expect(response.header("Content-Length") != nil, "\(response)", sourceLocation: sourceLocation)
    if let length = response.header("Content-Length") {
        #expect(Int(length) == response.body.count, "\(response)", sourceLocation: sourceLocation)
    }
}

/// Checks an error response field by field: status, JSON headers, `{"error":{"code","message"}}`
/// with exactly those keys and a non-empty message.
package func liveExpectError(
    _ response: LiveResponse, status: Int, code: String, extraKeys: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(response.status == status, "\(response)", sourceLocation: sourceLocation)
    liveExpectJSONHeaders(response, sourceLocation: sourceLocation)
    #expect(
        try response.keys(sourceLocation: sourceLocation) == Set(["error"] + extraKeys), sourceLocation: sourceLocation)
    let body = try response.decode(LiveErrorBody.self, sourceLocation: sourceLocation)
    #expect(body.error.code == code, "\(response)", sourceLocation: sourceLocation)
    #expect(!body.error.message.isEmpty, sourceLocation: sourceLocation)
    if case .object(let outer) = try response.json(sourceLocation: sourceLocation),
        case .object(let inner)? = outer["error"]
    {
        #expect(Set(inner.keys) == ["code", "message"], "\(response)", sourceLocation: sourceLocation)
    }
}

/// True for the 22-character base64url form of a session id.
package func liveIsSessionID(_ text: String) -> Bool {
    text.utf8.count == 22
        && text.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_")
        }
}
