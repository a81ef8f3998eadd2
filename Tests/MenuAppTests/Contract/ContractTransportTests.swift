import MenuAppTestSupport
import Testing

extension AppTests {
    /// The two transports of the contract tests answer alike, so a contract test that passes over one
    /// and fails over the other points at the HTTP layer (or at the in-process client).
    @Suite struct ContractTransportTests {
        /// Requests that make no session (a session id is random), with percent-escapes and repeated
        /// arguments the in-process client must split and decode as the listener does.
        static let requests: [(method: String, target: String)] = [
            ("GET", "/rows"), ("GET", "/rows?offset=16&limit=3"), ("GET", "/rows?offset=%31%36&limit=0003"),
            ("GET", "/count"),
            ("GET", "/healthz"), ("GET", "/rows?offset=1&offset=2"), ("GET", "/rows?limit"), ("GET", "/rows?limt=7"),
            ("GET", "/%E4%B8%BB%E8%8F%9C"), ("GET", "/groups/a%22b%5Cc/toggle"), ("POST", "/groups/a%22b%5Cc/toggle"),
            ("DELETE", "/sessions/AAAAAAAAAAAAAAAAAAAAAA"), ("DELETE", "/session"), ("GET", "/session"),
            ("PUT", "/count")
        ]

        @Test
        func bothTransportsGiveTheSameStatusHeadersAndBodyByteForByte() async throws {
            let inProcess = try ContractTransport.inProcess.start()
            defer { inProcess.shutdown() }
            let live = try ContractTransport.live.start()
            defer { live.shutdown() }
            for (method, target) in Self.requests {
                let expected = try await inProcess.client().send(method, target)
                let answer = try await live.client().send(method, target)
                #expect(answer.status == expected.status, "\(method) \(target): \(answer) vs \(expected)")
                #expect(answer.text == expected.text, "\(method) \(target)")
                for header in expected.headers {
                    #expect(answer.headerValues(header.name) == [header.value], "\(method) \(target): \(header.name)")
                }
            }
        }
    }
}
