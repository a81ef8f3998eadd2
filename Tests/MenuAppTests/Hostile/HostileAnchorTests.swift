// Hostile page anchors (`after`, `before`, `around` on GET /rows) and node ids in /nodes/{id}:
// run with every other hostile request by HostileInputTests (`HostileCase.all` includes these).

extension HostileCase {
    static let anchors: [HostileCase] = {
        let h = host
        return [
            text("an empty anchor", .json(400, "invalid_parameter")) { "GET /rows?after= HTTP/1.1\r\n\(h)\r\n" },
            text("an anchor without a value", .json(400, "invalid_parameter")) {
                "GET /rows?around HTTP/1.1\r\n\(h)\r\n"
            },
            text("an anchor given twice", .json(400, "invalid_parameter")) {
                "GET /rows?before=beer&before=beer HTTP/1.1\r\n\(h)\r\n"
            },
            text("an anchor with an offset", .json(400, "invalid_parameter")) {
                "GET /rows?around=beer&offset=0 HTTP/1.1\r\n\(h)\r\n"
            },
            text("two anchors", .json(400, "invalid_parameter")) {
                "GET /rows?after=beer&before=beer HTTP/1.1\r\n\(h)\r\n"
            },
            text("all four placements", .json(400, "invalid_parameter")) {
                "GET /rows?offset=1&after=a&before=b&around=c HTTP/1.1\r\n\(h)\r\n"
            },
            text("an anchor in another case", .json(400, "invalid_parameter")) {
                "GET /rows?After=beer HTTP/1.1\r\n\(h)\r\n"
            },
            text("an unknown anchor", .json(404, "unknown_node")) { "GET /rows?after=desserts HTTP/1.1\r\n\(h)\r\n" },
            text("%00 in an anchor", .json(404, "unknown_node"), .json(400, "invalid_parameter")) {
                "GET /rows?after=beer%00 HTTP/1.1\r\n\(h)\r\n"
            },
            text("invalid percent escape in an anchor", .json(404, "unknown_node"), .json(400, "invalid_parameter")) {
                "GET /rows?around=%zz HTTP/1.1\r\n\(h)\r\n"
            },
            text("percent-encoded invalid UTF-8 anchor", .json(404, "unknown_node")) {
                "GET /rows?before=%E0%A4 HTTP/1.1\r\n\(h)\r\n"
            },
            text("a 20 KB anchor", .json(404, "unknown_node"), .mhd(414), .closed) {
                "GET /rows?after=\(String(repeating: "x", count: 20_000)) HTTP/1.1\r\n\(h)\r\n"
            },
            text("an anchor with a bad limit", .json(400, "invalid_parameter")) {
                "GET /rows?around=beer&limit=0 HTTP/1.1\r\n\(h)\r\n"
            },
            text("before the first row", .json(200, "")) { "GET /rows?before=main-courses HTTP/1.1\r\n\(h)\r\n" },
            text("around the last row with the largest limit", .json(200, "")) {
                "GET /rows?around=zhuyeqing-tea&limit=500 HTTP/1.1\r\n\(h)\r\n"
            },
            text("an unknown node", .json(404, "unknown_node")) { "GET /nodes/desserts HTTP/1.1\r\n\(h)\r\n" },
            text("encoded dot-dot as a node id", .json(404, "unknown_node")) {
                "GET /nodes/%2e%2e HTTP/1.1\r\n\(h)\r\n"
            },
            text("encoded slashes in a node id", .json(404, "not_found")) {
                "POST /nodes/a%2Fb/reveal HTTP/1.1\r\n\(h)Content-Length: 0\r\n\r\n"
            },
            text("a query on /nodes/{id}", .json(400, "invalid_parameter")) {
                "GET /nodes/beer?after=beer HTTP/1.1\r\n\(h)\r\n"
            }
        ]
    }()
}
