import HTTPCore
import WebAssets

/// One file of the browser page `GET /` serves (``WebAssetFiles``), with its route, media type
/// and strong entity tag.
///
/// Invariant: ``entityTag`` is a hash of exactly the bytes served, so a tag a browser holds
/// matches only while the binary serves those bytes. Cost: the tags are computed once per
/// process (FNV-1a over about 30 KB); an answer copies no file.
package enum WebAsset: String, CaseIterable, Hashable, Sendable {
    case page
    case script
    case style

    /// The path that serves it.
    package var path: String {
        switch self {
        case .page: "/"
        case .script: "/app.js"
        case .style: "/app.css"
        }
    }

    package var contentType: String {
        switch self {
        case .page: "text/html; charset=utf-8"
        case .script: "text/javascript; charset=utf-8"
        case .style: "text/css; charset=utf-8"
        }
    }

    /// The checked-in files it serves, one after another.
    package var files: [String] {
        switch self {
        case .page: ["Web/index.html"]
        case .script: WebAssetFiles.scriptFiles
        case .style: ["Web/app.css"]
        }
    }

    package var bytes: [UInt8] {
        switch self {
        case .page: WebAssetFiles.indexHTML
        case .script: WebAssetFiles.appJS
        case .style: WebAssetFiles.appCSS
        }
    }

    /// The strong tag of the bytes: `asset-` and their 64-bit FNV-1a hash in hex (not a security
    /// hash: it only has to change when the file does). A ``SessionEntityTag`` value because that is
    /// the opaque tag `If-None-Match` is compared with (``EntityTagCondition``), sessions or not.
    package var entityTag: SessionEntityTag { Self.tags[self]! }

    private static let tags: [WebAsset: SessionEntityTag] = Dictionary(
        uniqueKeysWithValues: allCases.map { asset in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in asset.bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            let hex = String(hash, radix: 16)
            return (
                asset,
                SessionEntityTag(opaque: Array(("asset-" + String(repeating: "0", count: 16 - hex.count) + hex).utf8))
            )
        })
}

extension MenuAPI {
    /// `asset` with its tag, `Cache-Control: no-cache` (a browser keeps it and revalidates on each
    /// load, so a new build is picked up at once) and `X-Content-Type-Options: nosniff`; `304`
    /// when `If-None-Match` names its tag. The page also carries a `Content-Security-Policy`
    /// allowing only its own origin: it loads nothing from elsewhere.
    func webAsset(_ asset: WebAsset, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let tag = asset.entityTag
        var headers: [(name: String, value: String)] = [("ETag", tag.headerValue), ("Cache-Control", "no-cache")]
        if try EntityTagCondition.noneMatchFails(in: request, current: tag) == true {
            return HTTPResponse(status: 304, headers: headers)
        }
        headers += [("Content-Type", asset.contentType), ("X-Content-Type-Options", "nosniff")]
        if asset == .page {
            headers.append(
                ("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"))
        }
        return HTTPResponse(status: 200, headers: headers, body: asset.bytes)
    }
}
