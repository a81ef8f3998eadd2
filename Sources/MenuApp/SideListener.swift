import HTTPCore
import HTTPServer

extension HTTPServer {
    /// A listener of its own beside the main one (metrics, admin): `configuration`'s limits on
    /// `address`, one thread, at most 64 connections. What libmicrohttpd cannot frame is a 400,
    /// a body over the limit a 413, and a request during the stop a 503 with `Retry-After: 1`, each
    /// as `error` writes it.
    static func sideListener(
        on address: ListenAddress, like configuration: HTTPServerConfiguration,
        error:
            @escaping @Sendable (_ status: Int, _ code: String, _ message: String, _ headers: [(String, String)])
            -> HTTPResponse,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws(HTTPServerError) -> HTTPServer {
        var settings = configuration
        settings.host = address.host
        settings.port = address.port
        settings.threads = 1
        settings.connectionLimit = min(settings.connectionLimit, 64)
        return try HTTPServer(
            configuration: settings, handler: handler,
            rejection: { rejection in
                switch rejection {
                case .serverStopping:
                    return error(503, "unavailable", "the server is stopping", [("Retry-After", "1")])
                case .payloadTooLarge(let limit):
                    return error(413, "payload_too_large", "the body is over \(limit) bytes; send a smaller batch", [])
                default:
                    return error(400, "bad_request", "malformed request", [])
                }
            })
    }
}
