/// Everything a ``MenuSession`` or ``MenuTable`` call can throw, with what the server said.
public enum MenuClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server answered with an error: its status, `code` and `message` as sent, the `revision`
    /// of a 412 and the `path` of a `not_visible`, and `Retry-After` when it gave one.
    case server(
        status: Int, code: String, message: String, revision: Int? = nil, path: [String]? = nil,
        retryAfterSeconds: Int? = nil)
    /// No answer: the connection failed or timed out (the description from URLSession). A write
    /// that ends here may or may not have been applied; ``MenuTable`` resolves that before it throws.
    case transport(String)
    /// An answer outside the contract: an unexpected status or a body that does not decode.
    case unexpectedAnswer(status: Int, detail: String)
    /// A write was refused `attempts` times because the session kept moving (other devices
    /// writing) or its earlier effect cannot be known; the table is caught up, nothing was applied blindly.
    case conflict(attempts: Int, detail: String)
    /// The caller asked for something the table cannot give (a row index past ``MenuTable/count``).
    case invalidArgument(String)

    /// The server's error code (`unknown_session`, `precondition_failed`, …), nil for other cases.
    public var code: String? {
        if case .server(_, let code, _, _, _, _) = self { code } else { nil }
    }

    public var description: String {
        switch self {
        case .server(let status, let code, let message, _, _, _): "the server answered \(status) \(code): \(message)"
        case .transport(let detail): "no answer from the server: \(detail)"
        case .unexpectedAnswer(let status, let detail):
            "an answer outside the menu-server contract (status \(status)): \(detail)"
        case .conflict(let attempts, let detail): "gave up after \(attempts) attempts: \(detail)"
        case .invalidArgument(let detail): detail
        }
    }
}
