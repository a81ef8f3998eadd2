import HTTPTestSupport
import Testing

@testable import HTTPCore
@testable import HTTPServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The framing decision on the real libmicrohttpd: which rejection each head gets, and that the
/// handler never sees a request whose body libmicrohttpd frames differently from its headers.
@Suite("Framing decisions against the real libmicrohttpd")
struct FramingLiveTests {
    /// Sends `head` with a chunked body "hello" and a pipelined request behind it, and expects
    /// the rejection's `status` with `Connection: close`, then the close, and the handler not called.
    private func expectRefused(
        _ head: String, status: Int, as rejection: HTTPRejection, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let log = CallLog()
        let server = try startServer(log: log)
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port, receiveTimeoutSeconds: 30)
        try connection.sendText(head + "\r\n5\r\nhello\r\n0\r\n\r\nGET /next HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.header("Connection")?.lowercased() == "close", sourceLocation: sourceLocation)
        #expect(
            connection.isClosedByPeer(within: 30), "the pipelined request was answered", sourceLocation: sourceLocation)
        #expect(log.requests.isEmpty, sourceLocation: sourceLocation)
        #expect(log.rejections == [rejection], sourceLocation: sourceLocation)
    }

    @Test(arguments: ["chunked ", "chunked\t", "Chunked ", "chunked;x=1", "gzip, chunked"])
    func aTransferEncodingLibmicrohttpdDoesNotChunkIsRefusedWithoutCallingTheHandler(_ value: String) throws {
        try expectRefused(
            "POST /te HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: \(value)\r\n", status: 501,
            as: .unsupportedTransferEncoding)
    }

    @Test func chunkedInAnyCaseIsDechunkedAndThePipelinedRequestAnswered() throws {
        let log = CallLog()
        let server = try startServer(log: log)
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port, receiveTimeoutSeconds: 30)
        try connection.sendText(
            "POST /te HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: cHuNkEd\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
                + "GET /next HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try connection.readResponse().status == 200)
        #expect(try connection.readResponse().status == 200)
        #expect(log.requests.map(\.path) == ["/te", "/next"])
        #expect(log.requests.first?.body == Array("hello".utf8))
        #expect(log.rejections.isEmpty)
    }

    @Test func chunkedInHTTP10IsRefused() throws {
        try expectRefused(
            "POST /te HTTP/1.0\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n", status: 400,
            as: .transferEncodingInHTTP10)
    }

    @Test func twoHostHeadersAreRefused() throws {
        try expectRefused("GET /h HTTP/1.1\r\nHost: a\r\nhost: a\r\n", status: 400, as: .duplicateHost)
    }

    @Test func aFoldedLineLibmicrohttpdGluesOntoANameIsRefused() throws {
        // libmicrohttpd 0.9.75 makes "X-A: a" + " Content-Length: 5" one header named
        // "X-AContent-Length: 5" and frames the request as bodyless.
        try expectRefused(
            "POST /fold HTTP/1.1\r\nHost: localhost\r\nX-A: a\r\n Content-Length: 5\r\n", status: 400,
            as: .malformedHeaderName("X-AContent-Length: 5"))
    }

    @Test func noHostInHTTP11IsOursToRefuseButHTTP10NeedsNone() throws {
        try expectRefused("GET /h HTTP/1.1\r\n", status: 400, as: .missingHost)
        let log = CallLog()
        let server = try startServer(log: log)
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port, receiveTimeoutSeconds: 30)
        try connection.sendText("GET /old HTTP/1.0\r\n\r\n")
        #expect(try connection.readResponse().status == 200)
        #expect(log.requests.map(\.path) == ["/old"])
    }

    @Test(arguments: ["/h x", "/h\tx", "/h\u{1}", "/h\u{7F}", "/h "])
    func whitespaceOrAControlByteInTheRawTargetIsRefused(_ target: String) throws {
        try expectRefused("GET \(target) HTTP/1.1\r\nHost: localhost\r\n", status: 400, as: .invalidRequestTarget)
    }

    @Test func aBadTargetWhoseHeadersLibmicrohttpdRefusesLeavesNoRequestInFlight() throws {
        let log = CallLog()
        let server = try startServer(log: log)
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port, receiveTimeoutSeconds: 30)
        // The target callback marks the request; libmicrohttpd then answers 431 itself, so the
        // access handler never runs and the completion callback sees the mark.
        try connection.sendText(
            "GET /h x HTTP/1.1\r\nHost: localhost\r\nX-Big: \(String(repeating: "a", count: 40_000))\r\n\r\n")
        #expect(try connection.readResponse().status == 431)
        #expect(connection.isClosedByPeer(within: 30))
        let next = try RawHTTPConnection(port: server.port, receiveTimeoutSeconds: 30)
        #expect(try next.request("GET", "/after").status == 200)
        // /after's completion may still be on its way; a request ended twice would leave -1.
        #expect(eventually { server.requestsInFlight == 0 })
        #expect(log.requests.map(\.path) == ["/after"])
        #expect(log.rejections.isEmpty)
    }
}
