import HTTPCore
import MenuModel

/// Localized titles (docs/api.md "Languages"): which of the menu's locales a read answers in.
///
/// `?lang=TAG` decides when given (a BCP 47 tag; anything else is 400 `invalid_parameter`), by
/// RFC 4647 lookup over the menu's locales; else `Accept-Language` (``LanguagePreference``, where
/// a malformed header counts as absent); else, or when nothing matches, the default locale. A
/// menu without locales answers as before and reads neither. The chosen index picks the rows
/// pre-encoded in that locale, its entity-tag prefix and its `Content-Language`: no string is
/// built per request beyond the header's ranges.
extension MenuAPI {
    /// The index in ``Menu/localeIndices`` of the locale `request` is answered in on `menu`.
    func negotiatedLocale(for request: HTTPRequest, on menu: ServedMenu) throws(APIError) -> Int {
        let parameter = try Self.languageParameter(in: request)
        guard !menu.localeKeys.isEmpty else { return 0 }
        if let parameter {
            return parameter.withUnsafeBufferPointer { LanguageTag.lookup($0, in: menu.localeKeys) } ?? 0
        }
        return LanguagePreference(headers: request.headers).locale(among: menu.localeKeys) ?? 0
    }

    /// The `lang` query parameter's bytes; nil without it; `invalid_parameter` when it is given
    /// twice or is not a well-formed language tag.
    static func languageParameter(in request: HTTPRequest) throws(APIError) -> [UInt8]? {
        let query = request.query
        var found: Int?
        for position in query.indices where query.name(at: position, equals: "lang") {
            guard found == nil else {
                throw .invalidParameter("lang given more than once; give one language tag such as en or zh-Hant")
            }
            found = position
        }
        guard let position = found else { return nil }
        let bytes = query.withValue(at: position) { Array($0 ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
        guard bytes.withUnsafeBufferPointer(LanguageTag.isWellFormed) else {
            let given = query.value(at: position).map { String($0.prefix(40)) } ?? ""
            throw .invalidParameter(
                "lang must be a BCP 47 language tag such as en, zh-Hant or pt-BR, got \(given.jsonQuoted)")
        }
        return bytes
    }
}
