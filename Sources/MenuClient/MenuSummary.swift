import Foundation

/// What a menu is, as `GET /menu` says, the same for every session: its title in the locale
/// answered in (nil when the config gives none), its locales (what a language picker lists, the
/// default first), its version, the zone of its opening hours, its counts, and every attribute
/// name with the JSON types its values take (for filters and for showing attributes).
public struct MenuSummary: Sendable, Hashable, Codable {
    public struct Counts: Sendable, Hashable, Codable {
        public var nodes: Int
        public var groups: Int
        public var leaves: Int
        /// Rows the config's default expansion shows.
        public var defaultRows: Int
    }

    public struct Attribute: Sendable, Hashable, Codable {
        public var name: String
        /// `string`, `number`, `boolean`, `null`, `array`, `object`: those its values take, sorted.
        public var types: [String]
    }

    public var version: String
    public var title: String?
    /// The locale answered in; nil for a menu without locales.
    public var locale: String?
    public var defaultLocale: String?
    public var locales: [String]
    public var timeZone: String?
    public var counts: Counts
    public var attributes: [Attribute]
}

extension MenuSession {
    /// The menu's summary (`GET /menu`) in the session's language (``MenuClientConfiguration/language``).
    /// Names no session and creates none.
    public func summary() async throws(MenuClientError) -> MenuSummary {
        let answer = try await http.send("GET", "menu")
        guard answer.status == 200 else { throw answer.error }
        return try answer.decode(MenuSummary.self)
    }
}
