import HTTPCore

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

    /// The 200 of a scrape, on the API's listener or one of its own: the page rendered now, with
    /// `Cache-Control: no-store` (a cached scrape would show counters that no longer hold).
    package func response() -> HTTPResponse {
        HTTPResponse(
            status: 200,
            headers: [(name: "Content-Type", value: contentType), (name: "Cache-Control", value: "no-store")],
            body: Array(render().utf8))
    }
}
