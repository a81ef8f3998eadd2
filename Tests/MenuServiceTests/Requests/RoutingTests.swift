import HTTPCore
import MenuServiceTestSupport
import Testing

@testable import MenuService

/// What only the service value shows: UTF-8 left unescaped, `--max-limit`, rejections rendered,
/// a full store. The contract itself is written once, over both transports, in MenuAppTests
/// (ContractEndpointTests, ContractErrorTests).
@Suite struct RoutingTests {
    @Test func utf8TitlesPassThroughUnescaped() throws {
        let body = try makeService().call("GET", "/rows", query: [("limit", "2")]).body
        #expect(String(decoding: body, as: UTF8.self).contains("\"title\":\"宮保雞丁\""))
    }

    @Test func limitAboveTheConfiguredMaximumIsRefused() throws {
        let service = try makeService(maxLimit: 10)
        #expect(service.call("GET", "/rows", query: [("limit", "10")]).status == 200)
        #expect(service.call("GET", "/rows", query: [("limit", "11")]).errorCode == "invalid_parameter")
    }

    @Test func rejectionsRenderAsJSONErrors() throws {
        let service = try makeService()
        let tooLarge = service.reject(.payloadTooLarge(limit: 65536))
        #expect(tooLarge.status == 413)
        #expect(tooLarge.errorCode == "payload_too_large")
        #expect(service.reject(.conflictingContentLength).status == 400)
        #expect(service.reject(.contentLengthWithChunked).status == 400)
    }

    @Test func fullStoreAnswers429WithRetryAfter() throws {
        let service = try makeService(maxSessions: 1)
        #expect(service.call("POST", "/sessions").status == 201)
        let response = service.call("POST", "/sessions")
        #expect(response.status == 429)
        #expect(response.errorCode == "too_many_sessions")
        #expect(response.header("Retry-After") != nil)
    }
}
