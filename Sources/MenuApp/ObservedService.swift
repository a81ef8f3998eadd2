import HTTPCore
import MenuService

/// The service as the HTTP layer calls it, with each request measured and named: its route
/// template, status and handler time go to ``MenuMetrics``, a line to the access log (when one is
/// kept), and the response carries the request's ``RequestID`` as `X-Request-Id` (the client's
/// when sane, a made one otherwise; a bad one is replaced, never refused).
///
/// Invariant: answers as ``MenuAPI/respond(to:)`` and ``MenuAPI/reject(_:)`` do, plus the
/// `X-Request-Id` header; every call is counted once, under a bounded route label.
/// Cost per request: two monotonic clock readings, ``MenuMetrics/record(route:status:nanoseconds:)``
/// (no lock, no allocation), the id (a byte compare per header, then a check of the client's or 15 characters made, no allocation) and its header,
/// and with an access log one real-time clock reading and one queue submit.
package struct ObservedService: Sendable {
    package let service: MenuAPI
    package let metrics: MenuMetrics
    /// The access log; nil or not ``ServerLog/logsRequests``: no request lines.
    package let log: ServerLog?

    package init(service: MenuAPI, metrics: MenuMetrics, log: ServerLog? = nil) {
        self.service = service
        self.metrics = metrics
        self.log = log.flatMap { $0.logsRequests ? $0 : nil }
    }

    package func respond(to request: HTTPRequest) -> HTTPResponse {
        reply(to: request).waitForResponse()
    }

    /// ``respond(to:)`` for a server with an event loop: a write the store started without
    /// waiting answers a ``DeferredResponse``, measured and logged when it is made (its time
    /// includes the wait for the store).
    package func reply(to request: HTTPRequest) -> HTTPReply {
        let started = monotonicNanoseconds()
        var route = MenuMetrics.unmatchedRoute
        let clientID = request.headers.firstValue(named: "x-request-id")
        switch service.reply(to: request, route: &route) {
        case .response(var response):
            return .response(finish(&response, request.method, clientID, route: route, started: started))
        case .deferred(let deferred):
            let (method, matched) = (request.method, route)
            return .deferred(
                deferred.map { [self] response in
                    var response = response
                    return finish(&response, method, clientID, route: matched, started: started)
                })
        }
    }

    package func reject(_ rejection: HTTPRejection) -> HTTPResponse {
        let started = monotonicNanoseconds()
        var response = service.reject(rejection)
        return finish(&response, "-", nil, route: MenuMetrics.rejectedRoute, started: started)
    }

    @inline(__always)
    private func finish(_ response: inout HTTPResponse, _ method: String, _ clientID: String?, route: Int, started: Int)
        -> HTTPResponse
    {
        let id = RequestID(client: clientID) ?? RequestID(madeAt: started)
        response.headers.append((name: "X-Request-Id", value: id.value))
        let elapsed = monotonicNanoseconds() - started
        metrics.record(route: route, status: response.status, nanoseconds: elapsed)
        if let log {
            log.request(
                ServerLog.RequestRecord(
                    wallNanoseconds: ServerLog.wallNanoseconds(), method: method, route: route, status: response.status,
                    durationNanoseconds: elapsed, bytes: response.bodyCount, requestID: id.value))
        }
        return response
    }
}
