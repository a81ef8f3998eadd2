import HTTPCore

/// Which other origins may use the API from a browser (`--cors-origin`): the origins listed may
/// use every route, and `*` lets any origin read (`GET`, `HEAD`) but not write.
///
/// Invariant: each listed origin is a lowercase serialized origin, `scheme://host[:port]` (no
/// path, no trailing `/`, no user info), without duplicates; a policy that allows nothing is not
/// made (``init(origins:)`` throws for an empty list). Immutable.
/// Cost: deciding for one request compares its `Origin` with each listed origin (a few dozen
/// bytes each); a server without a policy pays nothing.
package struct CrossOriginPolicy: Sendable, Equatable {
    /// The origins allowed every method, lowercase.
    package let origins: [String]
    /// Whether any origin may read (`*` was given).
    package let anyOriginReads: Bool

    /// The request headers a preflight may ask for, beyond the CORS-safelisted ones, as
    /// `Access-Control-Allow-Headers` names them.
    package static let allowedHeaders = ["X-Session-Id", "If-Match", "If-None-Match", "Content-Type"]
    /// The response headers a page on another origin may read beyond the safelisted ones.
    package static let exposedHeaders = ["X-Session-Id", "ETag"]
    /// The methods `*` allows.
    package static let readMethods = ["GET", "HEAD"]
    /// Seconds a browser may cache a preflight's answer.
    package static let preflightMaxAgeSeconds = 600

    /// The policy allowing `origins`: each a serialized origin or `*`. Throws, naming the value,
    /// for one that is not (a path or trailing `/`, user info, a port out of range, `null`).
    package init(origins given: [String]) throws(CrossOriginPolicyError) {
        guard !given.isEmpty else {
            throw .invalid(value: "", reason: "give at least one origin, or * for reads from any origin")
        }
        var origins: [String] = []
        var anyOriginReads = false
        for value in given {
            if value == "*" {
                anyOriginReads = true
                continue
            }
            let origin = try Self.serializedOrigin(value)
            if !origins.contains(origin) { origins.append(origin) }
        }
        self.origins = origins
        self.anyOriginReads = anyOriginReads
    }

    /// `value` as a lowercase serialized origin, or why it is not one.
    package static func serializedOrigin(_ value: String) throws(CrossOriginPolicyError) -> String {
        let lower = value.lowercased()
        func refuse(_ reason: String) -> CrossOriginPolicyError { .invalid(value: value, reason: reason) }
        guard let separator = lower.firstRange(of: "://") else {
            throw refuse("an origin is scheme://host[:port], e.g. http://localhost:3000")
        }
        let scheme = lower[..<separator.lowerBound]
        let authority = lower[separator.upperBound...]
        guard let first = scheme.utf8.first, first >= UInt8(ascii: "a"), first <= UInt8(ascii: "z"),
            scheme.utf8.allSatisfy({ isSchemeByte($0) })
        else { throw refuse("the scheme must be letters, digits, + - or . starting with a letter") }
        guard !authority.contains("/") else { throw refuse("an origin has no path, not even a trailing /") }
        guard !authority.contains("@") else { throw refuse("an origin has no user info (user@)") }
        var host = authority
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            let port = authority[authority.index(after: colon)...]
            guard !port.isEmpty, port.count <= 5,
                port.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let number = Int(port), (1 ... 65535).contains(number)
            else { throw refuse("the port must be a number from 1 to 65535") }
            host = authority[..<colon]
        }
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ",") })
        else { throw refuse("the host must be a name or address in ASCII (punycode), without spaces or commas") }
        return lower
    }

    /// `text` without the spaces and tabs around it (an element of a comma-separated list).
    package static func trimmed(_ text: Substring) -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(text.drop(while: blank).reversed().drop(while: blank).reversed())
    }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    /// What the policy grants a request from `origin` (a header value as sent). A listed origin
    /// matches byte for byte: browsers send the serialized origin, lowercase, so an answer's
    /// `Access-Control-Allow-Origin` is exactly the `Origin` the browser compares it with.
    package func grant(for origin: [UInt8]) -> CrossOriginGrant {
        for listed in origins where listed.utf8.elementsEqual(origin) { return .everyMethod(origin: listed) }
        return anyOriginReads ? .reads : .none
    }
}

/// What a ``CrossOriginPolicy`` grants one origin.
package enum CrossOriginGrant: Sendable, Equatable {
    /// A listed origin: every method; answers name it in `Access-Control-Allow-Origin`.
    case everyMethod(origin: String)
    /// Any origin under `*`: `GET` and `HEAD`; answers say `Access-Control-Allow-Origin: *`.
    case reads
    /// Nothing: answers carry no `Access-Control-*` header, and the browser keeps them from the page.
    case none

    /// The value of `Access-Control-Allow-Origin`, nil for ``none``.
    package var allowOrigin: String? {
        switch self {
        case .everyMethod(let origin): origin
        case .reads: "*"
        case .none: nil
        }
    }

    /// Which of `methods` the grant allows.
    package func allowedMethods(of methods: [String]) -> [String] {
        switch self {
        case .everyMethod: methods
        case .reads: methods.filter(CrossOriginPolicy.readMethods.contains)
        case .none: []
        }
    }
}

/// Why a `--cors-origin` value was refused.
package enum CrossOriginPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalid(value: String, reason: String)

    /// What is wrong with the value.
    package var reason: String {
        switch self {
        case .invalid(_, let reason): reason
        }
    }

    package var description: String {
        switch self {
        case .invalid(let value, let reason): "\"\(value)\" is not an origin: \(reason)"
        }
    }
}
