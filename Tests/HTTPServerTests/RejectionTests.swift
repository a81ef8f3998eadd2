import Foundation
import HTTPTestSupport
import Testing

@testable import HTTPCore
@testable import HTTPServer

@Suite("HTTPServer live: bodies over the limit and conflicting framing are rejected")
struct RejectionTests {
    @Test func declaredBodyOverLimitGets413FromRejectionWithoutCallingHandler() throws {
        let log = CallLog()
        let server = try startServer(log: log, maxBodyBytes: 1000)
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("POST /big HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5000\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 413)
        #expect(response.bodyText == "too large, limit 1000")
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(try connection.readUntilClosed().isEmpty)
        #expect(log.requests.isEmpty)
        #expect(log.rejections == [.payloadTooLarge(limit: 1000)])
    }

    @Test func streamedChunkedBodyOverLimitGets413WithoutCallingHandler() throws {
        let log = CallLog()
        let server = try startServer(log: log, maxBodyBytes: 1000)
        defer { server.shutdown() }

        let piece = [UInt8](repeating: 0x61, count: 800)
        var wire = Array("POST /big HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for _ in 0 ..< 3 {
            wire += Array("320\r\n".utf8) + piece + [13, 10]
        }
        wire += Array("0\r\n\r\n".utf8)
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendBytes(wire)
        let response = try connection.readResponse()
        #expect(response.status == 413)
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(log.requests.isEmpty)
        #expect(log.rejections == [.payloadTooLarge(limit: 1000)])
    }

    @Test func endlessOversizedChunkedBodyIsCutOffAfterTheDiscardCap() throws {
        let log = CallLog()
        let server = try startServer(log: log, maxBodyBytes: 1000)
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("POST /flood HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")
        let piece = Array("10000\r\n".utf8) + [UInt8](repeating: 0x62, count: 0x10000) + [13, 10]
        var sentBytes = 0
        var cutOff = false
        while sentBytes < 64 << 20 {
            do {
                try connection.sendBytes(piece)
                sentBytes += piece.count
            } catch {
                cutOff = true
                break
            }
        }
        #expect(cutOff, "the server kept reading an endless body")
        #expect(sentBytes > maxDiscardedBodyBytes)
        #expect(log.requests.isEmpty)
    }

    @Test func bodyExactlyAtLimitIsAccepted() throws {
        let log = CallLog()
        let server = try startServer(log: log, maxBodyBytes: 1000)
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendBytes(
            Array("POST /ok HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n".utf8)
                + [UInt8](repeating: 7, count: 1000))
        #expect(try connection.readResponse().status == 200)
        #expect(log.requests.first?.body.count == 1000)
        #expect(log.rejections.isEmpty)
    }

    @Test func twoDifferentContentLengthHeadersAreRejected() throws {
        let log = CallLog()
        let server = try startServer(log: log)
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText(
            "POST /smuggle HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello")
        let response = try connection.readResponse()
        #expect(response.status == 400)
        #expect(response.bodyText == "conflicting content-length")
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(log.requests.isEmpty)
        #expect(log.rejections == [.conflictingContentLength])
    }

    @Test func twoEqualContentLengthHeadersAreAccepted() throws {
        let log = CallLog()
        let server = try startServer(log: log)
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText(
            "POST /same HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello")
        #expect(try connection.readResponse().status == 200)
        #expect(log.requests.first?.body == Array("hello".utf8))
        #expect(log.rejections.isEmpty)
    }

    @Test func contentLengthTogetherWithChunkedIsRejected() throws {
        let log = CallLog()
        let server = try startServer(log: log)
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText(
            "POST /smuggle HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\nhello\r\n0\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 400)
        #expect(response.bodyText == "content-length with chunked")
        #expect(log.requests.isEmpty)
        #expect(log.rejections == [.contentLengthWithChunked])
    }

    @Test func unsupportedTransferEncodingGets501WithoutCallingHandler() throws {
        let log = CallLog()
        let server = try startServer(log: log)
        defer { server.shutdown() }

        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendText("POST /gz HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 501)
        #expect(log.requests.isEmpty)
        #expect(log.rejections == [.unsupportedTransferEncoding])
    }
}
