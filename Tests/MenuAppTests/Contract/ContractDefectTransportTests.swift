import MenuApp
import MenuAppTestSupport
import Testing

extension AppTests {
    /// The contract defects of `ContractDefectTests` (issue 11, item 7) that were checked twice, in
    /// process and over a real server, written once and run over both transports.
    @Suite struct ContractDefectTransportTests {
        @Test(arguments: ContractTransport.allCases, [1, 5, 49, 50, 51, 500])
        func aPageWithoutLimitIsFiftyRowsOrMaxLimitWhenThatIsSmaller(over transport: ContractTransport, maxLimit: Int)
            async throws
        {
            let server = try transport.start { $0.maxLimit = maxLimit }
            defer { server.shutdown() }
            let page = try await server.client().get("/rows").decode(LiveRowsPage.self)
            let expected = min(50, maxLimit)
            #expect(page.limit == expected)
            #expect(page.rows.count == min(expected, 30))  // the menu has 30 visible rows
        }

        @Test(arguments: ContractTransport.allCases)
        func aMistypedLimitIs400NotFiftyRows(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let response = try await server.client().get("/rows?limt=7")
            try liveExpectError(response, status: 400, code: "invalid_parameter")
            #expect(
                try response.decode(LiveErrorBody.self).error.message
                    == #"unknown query parameter "limt"; GET /rows takes offset, limit, after, before, around, lang, q, filter, at and ancestors"#
            )
        }
    }
}
