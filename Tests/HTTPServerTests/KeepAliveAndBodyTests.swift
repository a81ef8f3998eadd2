import Foundation
import HTTPTestSupport
import Testing

@testable import HTTPCore
@testable import HTTPServer

@Suite("HTTPServer live: keep-alive and request bodies")
struct KeepAliveAndBodyTests {
    // MARK: Keep-alive (regression: never queue on the first access-handler call)

    @Test func twoRequestsOnOneConnectionAreBothAnsweredWithoutConnectionClose() throws {
        let server = try startServer { request in
            HTTPResponse(status: 200, body: Array("\(request.method) \(request.path) \(request.body.count)".utf8))
        }
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("GET /one HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let first = try connection.readResponse()
        try connection.sendText("POST /two HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc")
        let second = try connection.readResponse()
        try connection.sendText("GET /three HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let third = try connection.readResponse()

        #expect(first.status == 200)
        #expect(first.bodyText == "GET /one 0")
        #expect(second.status == 200)
        #expect(second.bodyText == "POST /two 3")
        #expect(third.bodyText == "GET /three 0")
        for response in [first, second, third] {
            #expect(!response.head.lowercased().contains("connection: close"), Comment(rawValue: response.head))
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try startServer { request in HTTPResponse(status: 200, body: Array(request.path.utf8)) }
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText(
            "GET /a HTTP/1.1\r\nHost: localhost\r\n\r\nGET /b HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try connection.readResponse().bodyText == "/a")
        #expect(try connection.readResponse().bodyText == "/b")
    }

    // MARK: Bodies

    @Test func fortyKilobytePostBodyIsAccumulatedAcrossUploadCalls() throws {
        let log = CallLog()
        let server = try startServer(log: log) { request in
            HTTPResponse(status: 200, body: Array("\(request.body.count)".utf8))
        }
        defer { server.shutdown() }

        let body = (0 ..< (40 * 1024)).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText(
            "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.count)\r\n\r\n")
        // Several writes with pauses, so the server really gets the body in pieces.
        for start in stride(from: 0, to: body.count, by: 10_000) {
            try connection.sendBytes(Array(body[start ..< min(start + 10_000, body.count)]))
            usleep(20_000)
        }
        let response = try connection.readResponse()
        #expect(response.status == 200)
        #expect(response.bodyText == "\(body.count)")
        #expect(log.requests.first?.body == body)
    }

    @Test func chunkedPostBodyIsDechunkedAndAccumulated() throws {
        let log = CallLog()
        let server = try startServer(log: log)
        defer { server.shutdown() }

        let body = (0 ..< (40 * 1024)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var wire = Array("POST /chunked HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for start in stride(from: 0, to: body.count, by: 9_000) {
            let piece = body[start ..< min(start + 9_000, body.count)]
            wire += Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]
        }
        wire += Array("0\r\n\r\n".utf8)
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendBytes(wire)
        let response = try connection.readResponse()
        #expect(response.status == 200)
        #expect(log.requests.first?.body == body)
    }
}
