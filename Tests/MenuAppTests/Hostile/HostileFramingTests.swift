// How a request's body is framed, against the real server (libmicrohttpd 0.9.75, 127.0.0.1 port 0)
// over raw sockets: every shape of Transfer-Encoding and its neighbours (trailing whitespace, case,
// lists of codings, two headers, HTTP/1.0, obs-fold lines next to framing headers, NUL bytes), and
// the Host header rules of RFC 9112.
//
// Each case sends its request with a pipelined `GET /healthz` right behind it, on one connection.
// The wrapper must frame the body exactly as libmicrohttpd does or refuse the request at once, so
// the pipelined request is either answered after a correct answer to the first, or dropped with
// the connection after a refusal; never read as the first request's body (which shows as no answer
// at all until the connection times out, or as a wrong answer to the first request).

import Foundation
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import MenuService
import MenuServiceTestSupport
import Testing

struct FramingCase: Sendable, CustomTestStringConvertible {
    enum Expected: Sendable, CustomStringConvertible {
        /// Our JSON error with this status and code, `Connection: close`, then the connection closes.
        case refused(Int, String)
        /// Our JSON answer with this status, then the pipelined `GET /healthz` is answered.
        case answered(Int)
        /// libmicrohttpd's own error page with this status (status checked only), then the close.
        case refusedByLibrary(Int)

        var description: String {
            switch self {
            case .refused(let status, let code): "refused with \(status) \(code)"
            case .answered(let status): "answered \(status), then the pipelined request"
            case .refusedByLibrary(let status): "refused by libmicrohttpd with \(status)"
            }
        }
    }

    let name: String
    let request: String
    let expected: Expected
    var testDescription: String { name }

    static let body = #"{"isExpanded":true}"#
    static let chunkedBody = "13\r\n\(body)\r\n0\r\n\r\n"
    static let put = "PUT /groups/beer/expansion HTTP/1.1\r\nHost: framing.test\r\n"
    static let pipelined = "GET /healthz HTTP/1.1\r\nHost: framing.test\r\n\r\n"

    /// The PUT with extra header lines `headers` (each ending in CRLF) and a chunked body.
    static func chunked(_ name: String, _ headers: String, _ expected: Expected) -> FramingCase {
        FramingCase(name: name, request: put + headers + "\r\n" + chunkedBody, expected: expected)
    }

    static let all: [FramingCase] = [
        // The value of Transfer-Encoding: libmicrohttpd frames chunked only for exactly "chunked",
        // any case, in its first Transfer-Encoding header; it keeps trailing whitespace in values.
        chunked("Transfer-Encoding chunked", "Transfer-Encoding: chunked\r\n", .answered(200)),
        chunked("Transfer-Encoding Chunked", "Transfer-Encoding: Chunked\r\n", .answered(200)),
        chunked("Transfer-Encoding CHUNKED after spaces", "Transfer-Encoding:   CHUNKED\r\n", .answered(200)),
        chunked("lowercase header name", "transfer-encoding: chunked\r\n", .answered(200)),
        chunked("chunked with a trailing space", "Transfer-Encoding: chunked \r\n", .refused(501, "not_implemented")),
        chunked("chunked with a trailing tab", "Transfer-Encoding: chunked\t\r\n", .refused(501, "not_implemented")),
        chunked("Chunked with a trailing space", "Transfer-Encoding: Chunked \r\n", .refused(501, "not_implemented")),
        chunked("chunked with a parameter", "Transfer-Encoding: chunked;q=1\r\n", .refused(501, "not_implemented")),
        // 0.9.75 ends the value at the NUL and hands "chunked" to the wrapper: both frame chunked.
        chunked("chunked, then NUL and more", "Transfer-Encoding: chunked\u{0}gzip\r\n", .answered(200)),
        chunked("empty Transfer-Encoding", "Transfer-Encoding:\r\n", .refused(501, "not_implemented")),
        chunked("Transfer-Encoding identity", "Transfer-Encoding: identity\r\n", .refused(501, "not_implemented")),

        // Lists of codings and repeated headers
        chunked("gzip, chunked", "Transfer-Encoding: gzip, chunked\r\n", .refused(501, "not_implemented")),
        chunked("chunked, gzip", "Transfer-Encoding: chunked, gzip\r\n", .refused(501, "not_implemented")),
        chunked("chunked, chunked", "Transfer-Encoding: chunked, chunked\r\n", .refused(501, "not_implemented")),
        chunked(
            "gzip header, then chunked header", "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
            .refused(501, "not_implemented")),
        chunked(
            "chunked header twice", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
            .refused(501, "not_implemented")),
        chunked(
            "chunked with Content-Length", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
            .refused(400, "bad_request")),

        // HTTP/1.0 knows no Transfer-Encoding (RFC 9112 §6.1: the framing is faulty)
        FramingCase(
            name: "HTTP/1.0 with chunked",
            request: "PUT /groups/beer/expansion HTTP/1.0\r\nHost: framing.test\r\nConnection: keep-alive\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n" + chunkedBody,
            expected: .refused(400, "bad_request")),
        FramingCase(
            name: "HTTP/1.0 with Content-Length",
            request: "PUT /groups/beer/expansion HTTP/1.0\r\nHost: framing.test\r\nConnection: keep-alive\r\n"
                + "Content-Length: 19\r\n\r\n" + body,
            expected: .answered(200)),

        // obs-fold lines next to framing headers: libmicrohttpd glues a continuation line onto
        // the header *name* ("Transfer-Encodinggzip"), so it frames as if the header were absent.
        chunked(
            "obs-fold after Transfer-Encoding", "Transfer-Encoding: chunked\r\n gzip\r\n",
            .refused(501, "not_implemented")),
        chunked(
            "Transfer-Encoding value on a folded line", "Transfer-Encoding:\r\n chunked\r\n",
            .refused(501, "not_implemented")),
        chunked(
            "Transfer-Encoding on a folded line", "X-Note: a\r\n Transfer-Encoding: chunked\r\n",
            .refused(400, "bad_request")),
        FramingCase(
            name: "Content-Length on a folded line",
            request: put + "X-Note: a\r\n\tContent-Length: 19\r\n\r\n" + body, expected: .refused(400, "bad_request")),
        chunked(
            "non-ASCII byte before Transfer-Encoding", "\u{FF}Transfer-Encoding: chunked\r\n",
            .refused(400, "bad_request")),
        FramingCase(
            name: "space before the colon of an ordinary header",
            request: put + "X-Note : a\r\nContent-Length: 19\r\n\r\n" + body, expected: .refused(400, "bad_request")),

        // Host (RFC 9112 §3.2)
        FramingCase(
            name: "two Host headers",
            request: "GET /count HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
            expected: .refused(400, "bad_request")),
        FramingCase(
            name: "the same Host twice",
            request: "GET /count HTTP/1.1\r\nHost: a.test\r\nhost: a.test\r\n\r\n",
            expected: .refused(400, "bad_request")),
        FramingCase(
            name: "two Host headers in HTTP/1.0",
            request: "GET /count HTTP/1.0\r\nConnection: keep-alive\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
            expected: .refused(400, "bad_request")),
        FramingCase(name: "an empty Host", request: "GET /count HTTP/1.1\r\nHost:\r\n\r\n", expected: .answered(200)),
        FramingCase(
            name: "HTTP/1.1 without Host", request: "GET /count HTTP/1.1\r\n\r\n",
            expected: .refused(400, "bad_request")),
        FramingCase(
            name: "HTTP/1.2 without Host", request: "GET /count HTTP/1.2\r\n\r\n",
            expected: .refused(400, "bad_request")),
        FramingCase(
            name: "Host with a space before the colon", request: "GET /count HTTP/1.1\r\nHost : a.test\r\n\r\n",
            expected: .refused(400, "bad_request")),

        // The request target as sent (libmicrohttpd hands the handler a percent-decoded path)
        FramingCase(
            name: "space inside the target", request: "GET /count x HTTP/1.1\r\nHost: a\r\n\r\n",
            expected: .refused(400, "bad_request")),
        FramingCase(
            name: "two spaces after the target", request: "GET /count  HTTP/1.1\r\nHost: a\r\n\r\n",
            expected: .refused(400, "bad_request")),
        FramingCase(
            name: "tab inside the target", request: "GET /count\tx HTTP/1.1\r\nHost: a\r\n\r\n",
            expected: .refused(400, "bad_request")),
        FramingCase(
            name: "DEL inside the target", request: "GET /count\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n",
            expected: .refused(400, "bad_request")),
        FramingCase(
            name: "percent-encoded space in the target", request: "GET /rows?limit=%201 HTTP/1.1\r\nHost: a\r\n\r\n",
            expected: .answered(400)),
        FramingCase(
            name: "a malformed request line",
            request: "GET /count\r\nHost: a\r\n\r\n", expected: .refusedByLibrary(400)),
        FramingCase(
            name: "HTTP/1.0 without Host", request: "GET /count HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
            expected: .answered(200))
    ]

    /// What went wrong on `connection` after the request was sent (empty when the case passed).
    func problems(on connection: RawHTTPConnection) -> [String] {
        let first: RawHTTPResponse
        do {
            first = try connection.readResponse()
        } catch {
            return ["no answer to the request (\(error)): its body or the pipelined request was swallowed"]
        }
        var problems: [String] = []
        let isJSON = first.header("Content-Type") == "application/json; charset=utf-8"
        switch expected {
        case .refused(let status, let code):
            if first.status != status || !isJSON || errorCode(of: first) != code {
                problems.append("expected our JSON \(status) \(code), got \(first)")
            }
            if first.header("Connection")?.lowercased() != "close" {
                problems.append("no Connection: close: \(first.head)")
            }
            if !connection.isClosedByPeer(within: 5) { problems.append("the connection stayed open after the refusal") }
        case .answered(let status):
            if first.status != status || !isJSON { problems.append("expected our JSON \(status), got \(first)") }
            do {
                let next = try connection.readResponse()
                if next.status != 200 || next.bodyText != #"{"status":"ok"}"# {
                    problems.append("the pipelined GET /healthz got \(next)")
                }
            } catch {
                problems.append("the pipelined GET /healthz got no answer (\(error))")
            }
        case .refusedByLibrary(let status):
            if first.status != status { problems.append("expected libmicrohttpd's \(status), got \(first)") }
            // 0.9.75 writes the head of its own pages twice; what follows is not a response.
            if (try? connection.readUntilClosed()) == nil {
                problems.append("the connection stayed open after the refusal")
            }
        }
        if isJSON, let problem = liveCachingProblem(header: first.header, head: first.head) { problems.append(problem) }
        return problems
    }

    /// The `code` of `{"error":{"code","message"}}`, or nil for any other body.
    private func errorCode(of response: RawHTTPResponse) -> String? {
        var problems: [String] = []
        let code = HostileCase.errorCode(response, problems: &problems)
        return problems.isEmpty ? code : nil
    }
}

extension AppTests {
    @Suite("Hostile framing: Transfer-Encoding, Content-Length and Host as libmicrohttpd reads them")
    struct HostileFramingTests {
        @Test(arguments: FramingCase.all)
        func framingIsLibmicrohttpdsOrTheRequestIsRefusedAtOnce(_ framing: FramingCase) async throws {
            // A 2 s connection timeout ends a request whose body swallowed the pipelined one.
            let server = try HostileInputTests.server()
            defer { server.shutdown() }
            let port = server.port
            let problems = try await hostileOnThread {
                let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 8)
                try connection.sendText(framing.request + FramingCase.pipelined)
                return framing.problems(on: connection)
            }
            #expect(problems.isEmpty, "\(framing.name): \(problems)")
        }
    }
}
