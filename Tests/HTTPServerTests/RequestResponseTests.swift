import Foundation
import HTTPTestSupport
import Testing

@testable import HTTPCore
@testable import HTTPServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("HTTPServer live: requests in, responses out")
struct RequestResponseTests {
    @Test func handlerReceivesMethodPathQueryHeadersAndBodyExactly() throws {
        let log = CallLog()
        let server = try startServer(log: log)
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText(
            "POST /items/42?a=1&b=&flag&a=2&sp=x%20y HTTP/1.1\r\n"
                + "Host: 127.0.0.1\r\n"
                + "X-Custom: Hello World\r\n"
                + "X-Dup: one\r\n"
                + "x-dup: two\r\n"
                + "Content-Type: text/plain\r\n"
                + "Content-Length: 7\r\n"
                + "\r\n"
                + "payload")
        let response = try connection.readResponse()
        #expect(response.status == 200)

        let requests = log.requests
        try #require(requests.count == 1)
        let request = requests[0]
        #expect(request.method == "POST")
        #expect(request.path == "/items/42")
        #expect(request.query.map(\.name) == ["a", "b", "flag", "a", "sp"])
        #expect(request.query.map(\.value) == ["1", "", nil, "2", "x y"])
        #expect(
            request.headers.map(\.name) == ["host", "x-custom", "x-dup", "x-dup", "content-type", "content-length"])
        #expect(request.headers.filter { $0.name == "x-dup" }.map(\.value) == ["one", "two"])
        #expect(request.header("X-CUSTOM") == "Hello World")
        #expect(request.header("x-dup") == "one")
        #expect(request.header("missing") == nil)
        #expect(request.body == Array("payload".utf8))
    }

    @Test func aRequestLargerThanTheFirstGuessArrivesWholeAndInOrder() throws {
        let log = CallLog()
        let server = try startServer(log: log)
        defer { server.shutdown() }

        // Past what the first copy expects (16 fields, 640 bytes): measured, then copied again.
        let arguments = (0 ..< 30).map { "q\($0)=\(String(repeating: "v", count: $0))" }
        let headers = (0 ..< 40).map { "X-Field-\($0): \(String(repeating: "h", count: 20 + $0))" }
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText(
            "GET /big/path?\(arguments.joined(separator: "&")) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + headers.map { $0 + "\r\n" }.joined() + "\r\n")
        #expect(try connection.readResponse().status == 200)

        let requests = log.requests
        try #require(requests.count == 1)
        let request = requests[0]
        #expect(request.path == "/big/path")
        #expect(request.query.map(\.name) == (0 ..< 30).map { "q\($0)" })
        #expect(request.query.map(\.value) == (0 ..< 30).map { String(repeating: "v", count: $0) })
        #expect(request.headers.map(\.name) == ["host"] + (0 ..< 40).map { "x-field-\($0)" })
        #expect(request.header("x-field-39") == String(repeating: "h", count: 59))
    }

    @Test func portZeroReportsTheRealBoundPort() throws {
        let server = try startServer()
        defer { server.shutdown() }
        #expect(server.port > 0 && server.port <= 65_535)
        #expect(RawHTTPConnection.connectErrno(port: server.port) == 0)
    }

    @Test func responseStatusHeadersAndBodyGoOutWithComputedContentLength() throws {
        let server = try startServer { _ in
            HTTPResponse(
                status: 201,
                headers: [
                    (name: "X-Reply", value: "yes"),
                    (name: "Content-Type", value: "application/octet-stream"),
                    (name: "Content-Length", value: "999"),  // ignored: the server computes it
                    (name: "X-Empty", value: "")  // cannot be sent by libmicrohttpd 0.9.75: left out
                ],
                body: [1, 2, 3, 4, 5])
        }
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET /x HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 201)
        #expect(response.header("X-Reply") == "yes")
        #expect(response.header("Content-Type") == "application/octet-stream")
        #expect(response.header("Content-Length") == "5")
        #expect(response.headers.filter { $0.name.lowercased() == "content-length" }.count == 1)
        #expect(response.header("X-Empty") == nil)
        #expect(response.body == [1, 2, 3, 4, 5])
    }

    @Test func urlSessionClientGetsStatusHeadersAndBody() async throws {
        let log = CallLog()
        let server = try startServer(log: log) { request in
            HTTPResponse(
                status: 202,
                headers: [(name: "X-Echo", value: request.header("x-token") ?? "none")],
                body: Array("hello \(request.path)".utf8))
        }
        defer { server.shutdown() }

        var urlRequest = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/greet?name=swift")!)
        urlRequest.setValue("abc", forHTTPHeaderField: "X-Token")
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, urlResponse) = try await session.data(for: urlRequest)
        guard let http = urlResponse as? HTTPURLResponse else {
            Issue.record("not an HTTP response: \(urlResponse)")
            return
        }
        #expect(http.statusCode == 202)
        #expect(http.value(forHTTPHeaderField: "X-Echo") == "abc")
        #expect(http.value(forHTTPHeaderField: "Content-Length") == "\("hello /greet".utf8.count)")
        #expect(String(decoding: data, as: UTF8.self) == "hello /greet")
        #expect(log.requests.first?.query.first?.name == "name")
        #expect(log.requests.first?.query.first?.value == "swift")
    }

    @Test func noContentResponseGoesOutWithoutBodyOrContentLength() throws {
        let server = try startServer { request in
            request.path == "/empty"
                ? HTTPResponse(status: 204, headers: [(name: "X-Kind", value: "none")], body: Array("dropped".utf8))
                : HTTPResponse(status: 200, body: Array("next".utf8))
        }
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET /empty HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let noContent = try connection.readResponse()
        #expect(noContent.status == 204)
        #expect(noContent.header("X-Kind") == "none")
        #expect(noContent.header("Content-Length") == nil)
        // No stray body bytes: the next response on the same connection parses cleanly.
        try connection.sendText("GET /after HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let next = try connection.readResponse()
        #expect(next.status == 200)
        #expect(next.bodyText == "next")
    }

    @Test func invalidResponseHeaderBecomesPlainText500NamingIt() throws {
        let server = try startServer { _ in
            HTTPResponse(status: 200, headers: [(name: "X-Bad", value: "a\r\nInjected: yes")], body: [1])
        }
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 500)
        #expect(response.header("Injected") == nil)
        #expect(response.bodyText.contains("\"X-Bad\""))
    }

    @Test(arguments: [(name: "X-Cut", value: "before\u{0}after"), (name: "X-Cut\u{0}Name", value: "v")])
    func aResponseHeaderWithANulBecomesPlainText500RatherThanBeingCutShort(name: String, value: String) throws {
        let server = try startServer { _ in HTTPResponse(status: 200, headers: [(name: name, value: value)], body: [1])
        }
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 500)
        #expect(response.header("X-Cut") == nil)
    }

    @Test(arguments: [42, 101, 199, 600, 999, 1000])
    func statusOutsideFinalRangeBecomes500(status: Int) throws {
        let server = try startServer { _ in HTTPResponse(status: status) }
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 500)
        #expect(response.bodyText.contains("status \(status) is not a final HTTP status (200...599)"))
    }

    @Test(arguments: [200, 599])
    func theFinalRangeEndsAreSentAsGiven(status: Int) throws {
        let server = try startServer { _ in HTTPResponse(status: status, body: Array("end".utf8)) }
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == status)
        #expect(response.bodyText == "end")
    }

    @Test func headRequestGetsHeadersWithContentLengthButNoBody() throws {
        let server = try startServer { request in
            HTTPResponse(status: 200, body: Array("twelve bytes".utf8))
        }
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("HEAD /h HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let head = try connection.readResponse(requestWasHEAD: true)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "12")
        try connection.sendText("GET /g HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try connection.readResponse().bodyText == "twelve bytes")
    }
}
