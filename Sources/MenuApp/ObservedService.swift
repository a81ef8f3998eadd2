import HTTPCore
import MenuService

/// The service as the HTTP layer calls it, with each request measured: its route template,
/// status and handler time go to ``MenuMetrics``.
///
/// Invariant: answers exactly as ``MenuService/respond(to:)`` and ``MenuService/reject(_:)``;
/// every call is counted once, under a bounded route label.
/// Cost per request: two monotonic clock readings and ``MenuMetrics/record(route:status:nanoseconds:)``
/// (no lock, no allocation).
package struct ObservedService: Sendable {
    package let service: MenuService
    package let metrics: MenuMetrics

    package init(service: MenuService, metrics: MenuMetrics) {
        self.service = service
        self.metrics = metrics
    }

    package func respond(to request: HTTPRequest) -> HTTPResponse {
        let started = monotonicNanoseconds()
        var route = MenuMetrics.unmatchedRoute
        let response = service.respond(to: request, route: &route)
        metrics.record(route: route, status: response.status, nanoseconds: monotonicNanoseconds() - started)
        return response
    }

    package func reject(_ rejection: HTTPRejection) -> HTTPResponse {
        let started = monotonicNanoseconds()
        let response = service.reject(rejection)
        metrics.record(route: MenuMetrics.rejectedRoute, status: response.status, nanoseconds: monotonicNanoseconds() - started)
        return response
    }
}
