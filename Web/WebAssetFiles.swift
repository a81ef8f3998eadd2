/// The browser page's files (`Web/index.html`, `app.js`, `app.css`), compiled into the binary by
/// SwiftPM (`resources: [.embedInCode(...)]` in Package.swift): the server reads no file at run
/// time, so the container image needs nothing beside the binary. Edit the files, rebuild.
///
/// Invariant: each array is the file's bytes as checked in. Cost: none at run time (static data).
package enum WebAssetFiles {
    package static let indexHTML: [UInt8] = PackageResources.index_html
    package static let appJS: [UInt8] = PackageResources.app_js
    package static let appCSS: [UInt8] = PackageResources.app_css
}
