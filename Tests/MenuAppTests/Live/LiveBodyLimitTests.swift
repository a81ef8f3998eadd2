// Bodies over the 64 KiB limit, over real HTTP: the HTTP layer answers 413 from the declared length
// (or the chunks read so far) and closes; a body of exactly the limit is served.

import Foundation
import MenuAppTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AppTests {
    @Suite("Live: a body over 64 KiB is 413 payload_too_large")
    struct LiveBodyLimitTests {
        @Test(arguments: ["PUT /groups/beer/expansion", "POST /sessions", "GET /rows"])
        func declaredBodyOver64KiBIs413PayloadTooLargeAndCloses(request: String) throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let parts = request.split(separator: " ").map(String.init)
            let connection = try server.connect()
            // Only the head is sent: the server must answer from the declared length alone.
            try connection.send(
                Array(
                    "\(parts[0]) \(parts[1]) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 65537\r\n\r\n"
                        .utf8))
            let response = try connection.readResponse()
            try liveExpectError(response, status: 413, code: "payload_too_large")
            #expect(response.header("Connection")?.lowercased() == "close", "\(response.head)")
            #expect(connection.isClosedByPeer())
        }

        @Test
        func chunkedBodyOver64KiBIs413PayloadTooLarge() throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let connection = try server.connect()
            let chunk = [UInt8](repeating: UInt8(ascii: " "), count: 70_000)
            try connection.send(
                Array(
                    "PUT /groups/beer/expansion HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                    + Array(String(chunk.count, radix: 16).utf8) + [13, 10] + chunk + Array("\r\n0\r\n\r\n".utf8))
            let response = try connection.readResponse()
            try liveExpectError(response, status: 413, code: "payload_too_large")
            #expect(response.header("Connection")?.lowercased() == "close", "\(response.head)")
        }

        @Test
        func urlSessionBodyOver64KiBIs413PayloadTooLarge() async throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let body = Array(#"{"isExpanded":false}"#.utf8) + [UInt8](repeating: UInt8(ascii: " "), count: 65_536)
            // `Expect: 100-continue`, as a client of a large body should: the 413, made from the
            // declared length, arrives before any of the body is sent. Without it the server's close
            // can reach a client still sending as a broken pipe instead (CI saw it once, under load).
            let response = try await server.client().send(
                "PUT", "/groups/beer/expansion", headers: [("Expect", "100-continue")], body: body)
            try liveExpectError(response, status: 413, code: "payload_too_large")
        }

        @Test
        func bodyOfExactly64KiBIsAccepted() async throws {
            let server = try LiveServer()
            defer { server.shutdown() }
            let json = Array(#"{"isExpanded":false}"#.utf8)
            let body = json + [UInt8](repeating: UInt8(ascii: " "), count: 65_536 - json.count)
            #expect(body.count == 64 * 1024)
            let response = try await server.client().send("PUT", "/groups/beer/expansion", body: body)
            #expect(response.status == 200, "\(response)")
            let change = try response.decode(LiveChange.self)
            #expect(change.change == LiveSplice(at: 18, inserted: 0, removed: 3))
        }
    }
}
