/// Where a Redis server is and how to log in: parsed from a `redis://` or `redis+unix://` URL.
///
/// Forms: `redis://[:password@]host[:port][/db]` (port 6379 when left out, IPv6 hosts in brackets)
/// and `redis+unix://[:password@]/absolute/path[?db=N]`.
/// The password is percent-decoded.
///
/// Invariant: a TCP port is in 1...65535, a unix path is not empty, `database` is >= 0. The
/// password never appears in `description` (it prints as `***`), so an endpoint can be logged.
/// Cost: parsing is linear in the URL; the value is a few strings.
package struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// A TCP host and port, or the path of a unix socket.
    package enum Address: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case unix(path: String)
    }

    package var address: Address
    /// Sent with AUTH after each connect when not nil.
    package var password: String?
    /// Selected with SELECT after each connect when not 0.
    package var database: Int

    package init(address: Address, password: String? = nil, database: Int = 0) {
        self.address = address
        self.password = password
        self.database = database
    }

    /// Parses `url`; the error says what is wrong with it and what is accepted.
    package init(parsing url: String) throws(RedisEndpointError) {
        func fail(_ problem: String) -> RedisEndpointError { RedisEndpointError(url: url, problem: problem) }
        let tcpScheme = "redis://"
        let unixScheme = "redis+unix://"
        let isUnix: Bool
        var rest: Substring
        if url.lowercased().hasPrefix(tcpScheme) {
            isUnix = false
            rest = url.dropFirst(tcpScheme.count)
        } else if url.lowercased().hasPrefix(unixScheme) {
            isUnix = true
            rest = url.dropFirst(unixScheme.count)
        } else {
            throw fail("the scheme must be redis:// or redis+unix://")
        }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") {
            guard pair.hasPrefix("db=") else {
                throw fail("the query item '\(pair.prefix(while: { $0 != "=" }))' is not known (only db=N)")
            }
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw fail("the query item '\(pair)' is not name=value") }
            guard let value = Self.percentDecoded(parts[1]) else {
                throw fail("the query item '\(parts[0])' has a bad percent escape")
            }
            parameters[String(parts[0])] = value
        }
        // userinfo: everything before the last '@' before the first '/' (a unix URL may carry one too).
        var password: String? = nil
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@") {
            let userInfo = rest[..<at]
            guard let colon = userInfo.firstIndex(of: ":"), colon == userInfo.startIndex else {
                throw fail("a user name is not supported; give only a password (redis://:password@host)")
            }
            let secret = userInfo[userInfo.index(after: colon)...]
            guard let decoded = Self.percentDecoded(secret) else { throw fail("the password has a bad percent escape") }
            password = decoded.isEmpty ? nil : decoded
            rest = rest[rest.index(after: at)...]
        }

        var database = 0
        func parseDatabase(_ text: Substring) throws(RedisEndpointError) -> Int {
            guard let number = Int(text), number >= 0, number < 1_000_000 else {
                throw fail("the database '\(text)' is not a number >= 0")
            }
            return number
        }
        if let given = parameters["db"] { database = try parseDatabase(Substring(given)) }

        if isUnix {
            guard !rest.isEmpty else { throw fail("the unix socket path is empty (redis+unix:///path/to/redis.sock)") }
            guard rest.hasPrefix("/") else {
                throw fail("the unix socket path must be absolute (redis+unix:///path/to/redis.sock)")
            }
            guard let path = Self.percentDecoded(rest) else {
                throw fail("the unix socket path has a bad percent escape")
            }
            self.init(address: .unix(path: path), password: password, database: database)
            return
        }

        var authority = rest
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty {
                guard parameters["db"] == nil else { throw fail("the database is given twice (path and ?db=)") }
                database = try parseDatabase(path)
            }
        }
        var host: Substring
        var portText: Substring? = nil
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw fail("the IPv6 host has no closing ']'") }
            host = authority[authority.index(after: authority.startIndex) ..< close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw fail("expected ':port' after the IPv6 host") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw fail("the host is empty (redis://host:port)") }
        var port = 6379
        if let portText {
            guard let number = Int(portText), (1 ... 65_535).contains(number) else {
                throw fail("the port '\(portText)' is not a number in 1...65535")
            }
            port = number
        }
        self.init(address: .tcp(host: String(host), port: port), password: password, database: database)
    }

    /// The URL with the password shown as `***`.
    package var description: String {
        let secret = password == nil ? "" : ":***@"
        switch address {
        case .tcp(let host, let port):
            let shownHost = host.contains(":") ? "[\(host)]" : host
            return "redis://\(secret)\(shownHost):\(port)" + (database == 0 ? "" : "/\(database)")
        case .unix(let path):
            return "redis+unix://\(secret)\(path)" + (database == 0 ? "" : "?db=\(database)")
        }
    }

    /// `%XX` escapes decoded as UTF-8; nil for a malformed escape or invalid UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// What is wrong with a Redis URL: `description` names the problem and the URL with its password redacted.
package struct RedisEndpointError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL as given, with anything between `://` and the last `@` of the authority replaced by `***`.
    package var url: String
    /// What is wrong, and what would be accepted.
    package var problem: String

    init(url: String, problem: String) {
        self.url = Self.redacted(url)
        self.problem = problem
    }

    package var description: String { "invalid Redis URL '\(url)': \(problem)" }

    private static func redacted(_ url: String) -> String {
        let characters = Array(url)
        guard
            let schemeEnd = (0 ..< max(0, characters.count - 2)).first(where: {
                characters[$0 ..< $0 + 3] == [":", "/", "/"]
            })
        else { return url }
        let start = schemeEnd + 3
        let authorityEnd = characters[start...].firstIndex(of: "/") ?? characters.endIndex
        guard let at = characters[start ..< authorityEnd].lastIndex(of: "@") else { return url }
        return String(characters[..<start]) + "***" + String(characters[at...])
    }
}
