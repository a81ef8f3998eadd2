/// The browser page's files (`Web/index.html`, the script, `app.css`), compiled into the binary by
/// SwiftPM (`resources: [.embedInCode(...)]` in Package.swift): the server reads no file at run
/// time, so the container image needs nothing beside the binary. Edit the files, rebuild.
///
/// Invariant: each array is the file's bytes as checked in; the script is ``scriptFiles``' bytes
/// one after another, each ending in a newline. Cost: one concatenation at first use.
package enum WebAssetFiles {
    package static let indexHTML: [UInt8] = PackageResources.index_html
    /// The files `GET /app.js` serves as one script, in this order: the page's words, a row's cells, then HTTP and
    /// the session, the search box, then the page (which calls the others once all are defined).
    package static let scriptFiles = ["Web/texts.js", "Web/cells.js", "Web/session.js", "Web/search.js", "Web/app.js"]
    package static let appJS: [UInt8] = [
        PackageResources.texts_js, PackageResources.cells_js, PackageResources.session_js,
        PackageResources.search_js, PackageResources.app_js
    ]
    .flatMap { $0.last == UInt8(ascii: "\n") ? $0 : $0 + [UInt8(ascii: "\n")] }
    package static let appCSS: [UInt8] = PackageResources.app_css
}
