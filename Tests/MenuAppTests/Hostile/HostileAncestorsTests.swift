// Hostile `?ancestors=` of GET /rows, on the raw socket: run with every other hostile request by
// HostileInputTests (`HostileCase.all` includes these). Anything but exactly `true` or `false`,
// once, is a 400 `invalid_parameter`.

extension HostileCase {
    static let ancestorFlags: [HostileCase] = {
        let refused: [(name: String, target: String)] = [
            ("an empty ancestors flag", "/rows?ancestors="),
            ("an ancestors flag without a value", "/rows?ancestors"),
            ("an ancestors flag given twice", "/rows?ancestors=true&ancestors=true"),
            ("ancestors in capitals", "/rows?ancestors=TRUE"),
            ("ancestors as a number", "/rows?ancestors=1"),
            ("ancestors=yes in a search", "/rows?q=beer&ancestors=yes"),
            ("%00 after true", "/rows?ancestors=true%00"),
            ("a 4 KB ancestors flag", "/rows?ancestors=\(String(repeating: "t", count: 4000))"),
            ("ancestors on a route that takes none", "/count?ancestors=true")
        ]
        let h = host
        return refused.map { name, target in
            text(name, .json(400, "invalid_parameter")) { "GET \(target) HTTP/1.1\r\n\(h)\r\n" }
        } + [
            text("ancestors past the last row", .json(200, "")) {
                "GET /rows?offset=100000&ancestors=true HTTP/1.1\r\n\(h)\r\n"
            },
            // A search's first build may find the builds busy with every other hostile search at once.
            text("ancestors of a filtered page", .json(200, ""), .json(429, "busy")) {
                "GET /rows?q=beer&offset=2&ancestors=true HTTP/1.1\r\n\(h)\r\n"
            }
        ]
    }()
}
