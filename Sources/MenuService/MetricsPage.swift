/// What `GET /metrics` answers with: a media type and the text, rendered afresh for each scrape
/// by the composition root (which knows the counters; the service only routes to them).
///
/// Invariant: `render` is safe to call from any thread at once and never touches a menu's
/// request path state. Cost: whatever `render` costs, paid by the scrape only.
package struct MetricsPage: Sendable {
    package var contentType: String
    package var render: @Sendable () -> String

    package init(contentType: String, render: @escaping @Sendable () -> String) {
        self.contentType = contentType
        self.render = render
    }
}
