// Hostile search input (`q` and `filter` on GET /search, /rows and /count), on the raw socket:
// run with every other hostile request by HostileInputTests (`HostileCase.all` includes these).
// A query that needs a filtered view built may also be `429 busy` when the others, sent at
// once, hold the one build slot (`--search-builds`).

extension HostileCase {
    static let searches: [HostileCase] = {
        let h = host
        let long = String(repeating: "%E9%BA%BB", count: 201)  // 201 × 麻
        return [
            text("an empty query", .json(400, "invalid_query")) { "GET /search?q= HTTP/1.1\r\n\(h)\r\n" },
            text("a query without a value", .json(400, "invalid_query")) { "GET /search?q HTTP/1.1\r\n\(h)\r\n" },
            text("a search asking nothing", .json(400, "invalid_query")) { "GET /search HTTP/1.1\r\n\(h)\r\n" },
            text("a query given twice", .json(400, "invalid_query")) { "GET /search?q=a&q=a HTTP/1.1\r\n\(h)\r\n" },
            text("a query of 201 characters", .json(400, "invalid_query")) {
                "GET /search?q=\(long) HTTP/1.1\r\n\(h)\r\n"
            },
            text("a 20 KB query", .json(400, "invalid_query"), .mhd(414), .closed) {
                "GET /rows?q=\(String(repeating: "e", count: 20_000)) HTTP/1.1\r\n\(h)\r\n"
            },
            text("a query of combining marks only", .json(200, ""), .json(429, "busy")) {
                "GET /search?q=\(String(repeating: "%CC%81", count: 150)) HTTP/1.1\r\n\(h)\r\n"
            },
            text("%00 in a query", .json(200, ""), .json(429, "busy")) { "GET /search?q=a%00b HTTP/1.1\r\n\(h)\r\n" },
            text("percent-encoded invalid UTF-8 in a query", .json(200, ""), .json(429, "busy")) {
                "GET /rows?q=%FF%FE HTTP/1.1\r\n\(h)\r\n"
            },
            text("invalid percent escape in a query", .json(200, ""), .json(400, "invalid_query"), .json(429, "busy")) {
                "GET /count?q=%zz HTTP/1.1\r\n\(h)\r\n"
            },
            text("a query in another case of the name", .json(400, "invalid_parameter")) {
                "GET /search?Q=tofu HTTP/1.1\r\n\(h)\r\n"
            },
            text("a filter without a colon", .json(400, "invalid_filter")) {
                "GET /search?filter=vegetarian HTTP/1.1\r\n\(h)\r\n"
            },
            text("a filter without an attribute", .json(400, "invalid_filter")) {
                "GET /rows?filter=:true HTTP/1.1\r\n\(h)\r\n"
            },
            text("an empty filter", .json(400, "invalid_filter")) { "GET /count?filter= HTTP/1.1\r\n\(h)\r\n" },
            text("a filter on an unknown attribute", .json(400, "invalid_filter")) {
                "GET /search?q=a&filter=colour:red HTTP/1.1\r\n\(h)\r\n"
            },
            text("seventeen filters", .json(400, "invalid_filter")) {
                "GET /search?\(Array(repeating: "filter=spicy:1", count: 17).joined(separator: "&")) HTTP/1.1\r\n\(h)\r\n"
            },
            text("a filter with %00 and colons in its value", .json(200, ""), .json(429, "busy")) {
                "GET /search?filter=en:a%00:b:c HTTP/1.1\r\n\(h)\r\n"
            },
            text("a number filter that is no number", .json(200, ""), .json(429, "busy")) {
                "GET /search?filter=price:1e99999 HTTP/1.1\r\n\(h)\r\n"
            },
            text("a filtered page far past the end", .json(200, ""), .json(429, "busy")) {
                "GET /rows?q=a&offset=9223372036854775807 HTTP/1.1\r\n\(h)\r\n"
            },
            text("a search page with a bad limit", .json(400, "invalid_parameter")) {
                "GET /search?q=a&limit=0 HTTP/1.1\r\n\(h)\r\n"
            },
            text("a filtered page anchored on a node it hides", .json(400, "invalid_parameter"), .json(429, "busy")) {
                "GET /rows?q=%E8%B1%86%E8%85%90&after=kung-pao-chicken HTTP/1.1\r\n\(h)\r\n"
            }
        ]
    }()
}
