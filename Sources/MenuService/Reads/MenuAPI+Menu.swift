import HTTPCore
import MenuModel
import MenuSessions

extension MenuAPI {
    /// `GET /menu`: what the menu is, before any row: `{"version","title","locale","defaultLocale",
    /// "locales","timeZone","counts":{"nodes","groups","leaves","defaultRows"},"attributes":[{"name",
    /// "types"}]}`, the title in the negotiated locale (`?lang=`, `Accept-Language`), `null` where
    /// the config gives none. It names no session and changes only with the menu: its tag is the
    /// version and the locale, so a client revalidates it with one `304` until a reload. The
    /// attribute types are read once per menu (``ServedMenu/attributeTypes``).
    func menuSummary(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let served = current
        let locale = try negotiatedLocale(for: request, on: served)
        let menu = served.generation.menu
        let tag = SessionEntityTag(opaque: served.entityTagPrefixes[locale] + Array("menu".utf8))
        var headers: [(name: String, value: String)] = [("ETag", tag.headerValue), ("Cache-Control", "no-cache")]
        if menu.locales.count > 0 { headers.append(("Vary", "Accept-Language")) }
        if try EntityTagCondition.noneMatchFails(in: request, current: tag) == true {
            return HTTPResponse(status: 304, headers: headers)
        }
        var writer = JSONWriter(capacity: 512)
        writer.raw("{\"version\":")
        writer.raw(served.versionJSON)
        writer.raw(",\"title\":")
        if let title = menu.title(locale: locale) { writer.string(title) } else { writer.raw("null") }
        writer.raw(",\"locale\":")
        if menu.locales.isEmpty { writer.raw("null") } else { writer.string(menu.locales[locale]) }
        writer.raw(",\"defaultLocale\":")
        if let first = menu.defaultLocale { writer.string(first) } else { writer.raw("null") }
        writer.raw(",\"locales\":")
        Self.writeIDs(menu.locales, to: &writer)
        writer.raw(",\"timeZone\":")
        if let zone = menu.timeZoneName { writer.string(zone) } else { writer.raw("null") }
        let leaves = menu.totalLeafCount
        writer.raw(",\"counts\":{\"nodes\":")
        writer.integer(menu.nodeCount)
        writer.raw(",\"groups\":")
        writer.integer(menu.nodeCount - leaves)
        writer.raw(",\"leaves\":")
        writer.integer(leaves)
        writer.raw(",\"defaultRows\":")
        writer.integer(menu.defaultCount)
        writer.raw("},\"attributes\":[")
        for (position, attribute) in served.attributeTypes.enumerated() {
            if position > 0 { writer.raw(",") }
            writer.raw("{\"name\":")
            writer.string(attribute.name)
            writer.raw(",\"types\":")
            Self.writeIDs(attribute.types, to: &writer)
            writer.raw("}")
        }
        writer.raw("]}")
        headers.append(("Content-Type", "application/json; charset=utf-8"))
        if !menu.locales.isEmpty { headers.append(("Content-Language", menu.locales[locale])) }
        return HTTPResponse(status: 200, headers: headers, body: writer.finish())
    }
}
