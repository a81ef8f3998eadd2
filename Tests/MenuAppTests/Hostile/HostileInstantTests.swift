// Hostile `?at=` (the instant GET /rows, /count, /search and /nodes/{id} are read at), on the
// raw socket: run with every other hostile request by HostileInputTests (`HostileCase.all`
// includes these). Anything that is not one RFC 3339 instant is a 400 `invalid_parameter`; an
// instant no request asked before may be a 429 `busy` while others are computed at once.

extension HostileCase {
    static let instants: [HostileCase] = {
        let h = host
        let bad = HostileCase.Outcome.json(400, "invalid_parameter")
        return [
            text("an empty instant", bad) { "GET /rows?at= HTTP/1.1\r\n\(h)\r\n" },
            text("an instant without a value", bad) { "GET /count?at HTTP/1.1\r\n\(h)\r\n" },
            text("an instant given twice", bad) {
                "GET /rows?at=2026-12-07T12:00:00Z&at=2026-12-07T12:00:00Z HTTP/1.1\r\n\(h)\r\n"
            },
            text("an instant without a zone", bad) { "GET /rows?at=2026-12-07T12:00:00 HTTP/1.1\r\n\(h)\r\n" },
            text("a date alone", bad) { "GET /search?q=a&at=2026-12-07 HTTP/1.1\r\n\(h)\r\n" },
            text("February 30th", bad) { "GET /count?at=2026-02-30T12:00:00Z HTTP/1.1\r\n\(h)\r\n" },
            text("hour 24", bad) { "GET /rows?at=2026-12-07T24:00:00Z HTTP/1.1\r\n\(h)\r\n" },
            text("an offset of +24:00", bad) { "GET /rows?at=2026-12-07T12:00:00%2B24:00 HTTP/1.1\r\n\(h)\r\n" },
            text("year 0000", bad) { "GET /rows?at=0000-01-01T00:00:00Z HTTP/1.1\r\n\(h)\r\n" },
            text("an offset that moves year 9999 past its end", bad) {
                "GET /rows?at=9999-12-31T23:59:59-01:00 HTTP/1.1\r\n\(h)\r\n"
            },
            text("a Unix time", bad) { "GET /rows?at=1796558400 HTTP/1.1\r\n\(h)\r\n" },
            text("%00 after an instant", bad) { "GET /rows?at=2026-12-07T12:00:00Z%00 HTTP/1.1\r\n\(h)\r\n" },
            text("percent-encoded invalid UTF-8 as an instant", bad) { "GET /count?at=%FF%FE HTTP/1.1\r\n\(h)\r\n" },
            text("a 4 KB instant", bad) {
                "GET /rows?at=2026-12-07T12:00:00.\(String(repeating: "9", count: 4000))Z HTTP/1.1\r\n\(h)\r\n"
            },
            text("an instant on a route that takes none", bad) {
                "GET /changes?since=0&at=2026-12-07T12:00:00Z HTTP/1.1\r\n\(h)\r\n"
            },
            text("an instant in another case of the name", bad) {
                "GET /rows?AT=2026-12-07T12:00:00Z HTTP/1.1\r\n\(h)\r\n"
            },
            text("an offset whose + arrived as a space", .json(200, ""), .json(429, "busy")) {
                "GET /rows?at=2026-12-07T12:00:00+01:00 HTTP/1.1\r\n\(h)\r\n"
            },
            text("lower-case t and z, and milliseconds", .json(200, ""), .json(429, "busy")) {
                "GET /count?at=2026-12-07t12:00:00.123z HTTP/1.1\r\n\(h)\r\n"
            },
            text("the first instant there is", .json(200, ""), .json(429, "busy")) {
                "GET /nodes/beer?at=0001-01-01T00:00:00Z HTTP/1.1\r\n\(h)\r\n"
            }
        ]
    }()
}
