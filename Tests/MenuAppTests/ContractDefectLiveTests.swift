import Testing

/// The contract defects of `ContractDefectTests` that need a real server.
@Suite struct ContractDefectLiveTests {
    @Test(.timeLimit(.minutes(1)))
    func aLiveServerWithMaxLimitFiveAnswersFiveRowsWithoutLimit() async throws {
        let server = try LiveServer { $0.maxLimit = 5 }
        defer { server.shutdown() }
        let page = try await server.client().get("/rows").decode(LiveRowsPage.self)
        #expect(page.limit == 5)
        #expect(page.rows.count == 5)
    }

    @Test(.timeLimit(.minutes(1)))
    func aLiveMistypedLimitIs400NotFiftyRows() async throws {
        let server = try LiveServer()
        defer { server.shutdown() }
        let response = try await server.client().get("/rows?limt=7")
        try liveExpectError(response, status: 400, code: "invalid_parameter")
        #expect(try response.decode(LiveErrorBody.self).error.message
            == #"unknown query parameter "limt"; GET /rows takes offset and limit"#)
    }
}
