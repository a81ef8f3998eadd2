import Foundation
import Synchronization

@testable import HTTPCore
@testable import HTTPServer

/// Everything the handler and rejection callbacks saw, shared with the test thread.
final class CallLog: Sendable {
    private let storage = Mutex<(requests: [HTTPRequest], rejections: [HTTPRejection])>(([], []))

    func record(_ request: HTTPRequest) {
        storage.withLock { $0.requests.append(request) }
    }

    func record(_ rejection: HTTPRejection) {
        storage.withLock { $0.rejections.append(rejection) }
    }

    var requests: [HTTPRequest] { storage.withLock { $0.requests } }
    var rejections: [HTTPRejection] { storage.withLock { $0.rejections } }
}

/// The rejection callback used by most tests: 413 / 400 with a short text body.
@Sendable func standardRejection(_ rejection: HTTPRejection) -> HTTPResponse {
    switch rejection {
    case .payloadTooLarge(let limit):
        return HTTPResponse(status: 413, body: Array("too large, limit \(limit)".utf8))
    case .conflictingContentLength:
        return HTTPResponse(status: 400, body: Array("conflicting content-length".utf8))
    case .contentLengthWithChunked:
        return HTTPResponse(status: 400, body: Array("content-length with chunked".utf8))
    case .unsupportedTransferEncoding:
        return HTTPResponse(status: 501, body: Array("unsupported transfer-encoding".utf8))
    case .transferEncodingInHTTP10:
        return HTTPResponse(status: 400, body: Array("transfer-encoding in http/1.0".utf8))
    case .duplicateHost:
        return HTTPResponse(status: 400, body: Array("two host headers".utf8))
    case .missingHost:
        return HTTPResponse(status: 400, body: Array("no host header".utf8))
    case .invalidRequestTarget:
        return HTTPResponse(status: 400, body: Array("invalid request target".utf8))
    case .malformedHeaderName(let name):
        return HTTPResponse(status: 400, body: Array("malformed header name \(name)".utf8))
    case .serverStopping:
        return HTTPResponse(status: 503, body: Array("stopping".utf8))
    case .tooManyStreamsFromAddress(let limit):
        return HTTPResponse(status: 429, body: Array("streams from this address, limit \(limit)".utf8))
    }
}

/// Starts a live server on 127.0.0.1, port 0, recording every call into `log`.
func startServer(
    log: CallLog = CallLog(),
    maxBodyBytes: Int = 64 * 1024,
    threads: Int = 2,
    perIPConnectionLimit: Int = HTTPServerConfiguration().perIPConnectionLimit,
    gatherResumesAbove: Int = HTTPServerConfiguration().gatherResumesAbove,
    handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse = { _ in HTTPResponse(status: 200) }
) throws -> HTTPServer {
    var configuration = HTTPServerConfiguration()
    configuration.perIPConnectionLimit = perIPConnectionLimit
    configuration.gatherResumesAbove = gatherResumesAbove
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.maxBodyBytes = maxBodyBytes
    configuration.threads = threads
    return try HTTPServer(
        configuration: configuration,
        handler: { request in
            log.record(request)
            return handler(request)
        },
        rejection: { rejection in
            log.record(rejection)
            return standardRejection(rejection)
        })
}

/// A one-shot signal between threads.
final class Signal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func fire() { semaphore.signal() }
    /// True if fired within `seconds`.
    func wait(seconds: Double) -> Bool { semaphore.wait(timeout: .now() + seconds) == .success }
}

/// A value set once by another thread.
final class Box<Value: Sendable>: Sendable {
    private let storage = Mutex<Value?>(nil)
    func set(_ value: Value) { storage.withLock { $0 = value } }
    var value: Value? { storage.withLock { $0 } }
}
