import Testing

@testable import HTTPCore
@testable import HTTPServer

@Suite("Request framing rules, without a socket")
struct FramingTests {
    private func check(_ headers: [(String, String)], limit: Int = 100) -> Framing {
        Framing.check(
            FramingHeaders(fields: headers.map { (name: $0.0, value: $0.1) }, hostCount: 1), maxBodyBytes: limit)
    }

    @Test func noBodyHeadersAcceptWithoutLength() {
        #expect(check([("host", "x")]) == .accept(declaredLength: nil))
    }

    @Test func contentLengthWithinLimitAcceptsWithDeclaredLength() {
        #expect(check([("content-length", "100")]) == .accept(declaredLength: 100))
        #expect(check([("content-length", " 7 ")]) == .accept(declaredLength: 7))
    }

    @Test func contentLengthOverLimitIsPayloadTooLarge() {
        #expect(check([("content-length", "101")]) == .reject(.payloadTooLarge(limit: 100)))
        #expect(
            check([("content-length", "99999999999999999999999999")])
                == .reject(.payloadTooLarge(limit: 100)))
    }

    @Test func differingOrMalformedRepeatedContentLengthsConflict() {
        #expect(check([("content-length", "5"), ("content-length", "6")]) == .reject(.conflictingContentLength))
        #expect(check([("content-length", "5"), ("content-length", "-5")]) == .reject(.conflictingContentLength))
        #expect(check([("content-length", "5"), ("content-length", "abc")]) == .reject(.conflictingContentLength))
        #expect(check([("content-length", "5, 5")]) == .reject(.conflictingContentLength))
        #expect(check([("content-length", "")]) == .reject(.conflictingContentLength))
    }

    @Test func equalRepeatedContentLengthsAreFine() {
        #expect(check([("content-length", "5"), ("content-length", "005")]) == .accept(declaredLength: 5))
    }

    @Test func contentLengthWithAnyTransferEncodingIsSmuggling() {
        #expect(
            check([("content-length", "5"), ("transfer-encoding", "chunked")]) == .reject(.contentLengthWithChunked))
        #expect(
            check([("transfer-encoding", "gzip"), ("content-length", "5")]) == .reject(.contentLengthWithChunked))
    }

    @Test func onlyASingleChunkedTransferEncodingIsSupported() {
        #expect(check([("transfer-encoding", "Chunked")]) == .accept(declaredLength: nil))
        #expect(check([("transfer-encoding", "CHUNKED")]) == .accept(declaredLength: nil))
        #expect(check([("transfer-encoding", "gzip, chunked")]) == .reject(.unsupportedTransferEncoding))
        #expect(
            check([("transfer-encoding", "chunked"), ("transfer-encoding", "chunked")])
                == .reject(.unsupportedTransferEncoding))
    }

    @Test func chunkedWithWhitespaceAroundItIsNotChunkedAsLibmicrohttpdDoesNotTrim() {
        for value in ["chunked ", "chunked\t", " chunked", "Chunked  ", "chunked\u{0}", "chunk", "chunkeds", ""] {
            #expect(
                check([("transfer-encoding", value)]) == .reject(.unsupportedTransferEncoding),
                "\(String(reflecting: value))")
        }
    }

    @Test func transferEncodingInHTTP10IsFaultyFraming() {
        let chunked = FramingHeaders(fields: [(name: "transfer-encoding", value: "chunked")], hostCount: 1)
        #expect(Framing.check(chunked, isHTTP10: true, maxBodyBytes: 100) == .reject(.transferEncodingInHTTP10))
        #expect(Framing.check(chunked, isHTTP10: false, maxBodyBytes: 100) == .accept(declaredLength: nil))
        let length = FramingHeaders(fields: [(name: "content-length", value: "5")], hostCount: 1)
        #expect(Framing.check(length, isHTTP10: true, maxBodyBytes: 100) == .accept(declaredLength: 5))
    }

    @Test func noHostTwoHostsOrAMalformedNameAreRefusedBeforeFraming() {
        #expect(Framing.check(FramingHeaders(hostCount: 1), maxBodyBytes: 100) == .accept(declaredLength: nil))
        #expect(Framing.check(FramingHeaders(hostCount: 2), maxBodyBytes: 100) == .reject(.duplicateHost))
        #expect(Framing.check(FramingHeaders(hostCount: 0), maxBodyBytes: 100) == .reject(.missingHost))
        #expect(
            Framing.check(FramingHeaders(hostCount: 0), isHTTP10: true, maxBodyBytes: 100)
                == .accept(declaredLength: nil))
        let folded = FramingHeaders(
            fields: [(name: "transfer-encoding", value: "chunked")], hostCount: 1,
            malformedName: "X-AContent-Length: 5")
        #expect(Framing.check(folded, maxBodyBytes: 100) == .reject(.malformedHeaderName("X-AContent-Length: 5")))
    }

    @Test func theCollectorKeepsFramingHeadersCountsHostAndNotesTheFirstMalformedName() {
        let long = "X-" + String(repeating: "n", count: 100) + " "
        let head = FramingHeaders(
            collecting: [
                ("Host", "a"), ("Transfer-Encoding", "chunked "), ("CONTENT-LENGTH6", "5"), ("HOST", "b"),
                ("X-Ok", "1"), (long, "v"), ("X-A ", "w"), ("transfer", "x")
            ].map { (name: Array($0.0.utf8), value: Array($0.1.utf8)) })
        #expect(head.fields.map(\.name) == ["transfer-encoding", "content-length6"])
        #expect(head.fields.map(\.value) == ["chunked ", "5"])
        #expect(head.hostCount == 2)
        #expect(head.malformedName == String(long.prefix(64)))
        #expect(FramingHeaders(collecting: [(name: Array("Hosts".utf8), value: [])]).hostCount == 0)
    }

    @Test func aHeaderNameIsMalformedExactlyWhenAByteOfItIsNotATokenCharacter() {
        let tchars = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for byte in UInt8.min ... UInt8.max {
            #expect(isTokenByte(byte) == tchars.contains(byte), "byte \(byte)")
            let head = FramingHeaders(collecting: [(name: Array("X-A".utf8) + [byte], value: [])])
            #expect((head.malformedName == nil) == tchars.contains(byte), "byte \(byte)")
        }
    }

    @Test func requestHeaderLookupIsCaseInsensitiveAndNamesAreLowercased() {
        let request = HTTPRequest(
            method: "GET", path: "/", headers: [(name: "X-Thing", value: "1"), (name: "x-thing", value: "2")])
        #expect(request.headers.map(\.name) == ["x-thing", "x-thing"])
        #expect(request.header("X-THING") == "1")
        #expect(request.header("x-thin") == nil)
    }

    @Test func bindAddressParsesLiteralsOnly() throws {
        #expect(throws: HTTPServerError.self) { try BindAddress(host: "example.com", port: 80) }
        #expect(try BindAddress(host: "0.0.0.0", port: 80).family == .ipv4)
        #expect(try BindAddress(host: "::1", port: 80).family == .ipv6Only)
        #expect(try BindAddress(host: "[::]", port: 80).family == .dualStack)
    }
}
