import MenuAvailability
import MenuModel
import MenuSessions
import Synchronization

/// One menu as the service answers from it: the store's generation, the rows encoded once per
/// locale, and the version as JSON. Immutable; replaced whole on a reload, freed when no request
/// holds it.
///
/// Invariant: `encoded`, `entityTagPrefixes` and `localeHeaders` have one entry per index of
/// ``Menu/localeIndices`` (index 0, the default locale, for a menu without locales).
/// Memory: the rows' JSON once, plus per further locale its titles' JSON and 8 bytes per node
/// (``EncodedMenu``).
package final class ServedMenu: Sendable {
    /// The listing sessions, rows, counts and searches are on: ``published`` itself, or while
    /// nodes hide (``hiddenIDs``) the menu without them (``Menu/hiding(_:)``).
    package let generation: MenuGeneration
    /// The menu as loaded: what availability (ids, opening hours) and reloads are judged on.
    package let published: Menu
    /// The ids of the outermost nodes the listing leaves out, sorted (none: the listing is
    /// ``published``).
    package let hiddenIDs: [String]
    /// The rows of each locale, pre-encoded (the others share the default's bytes but for the
    /// titles): a request picks one by its locale index.
    let encoded: [EncodedMenu]
    let versionJSON: [UInt8]
    /// ``versionJSON`` as text, for the change stream's events.
    var versionText: String { String(decoding: versionJSON, as: UTF8.self) }
    /// What each ``SessionEntityTag`` of this menu starts with, per locale: the version and `-`,
    /// then for a menu with locales the locale and `-` (`"<version>-<locale>-<revision>"`).
    let entityTagPrefixes: [[UInt8]]
    /// The menu's locales in lowercase, the default first (what negotiation compares with).
    let localeKeys: [[UInt8]]
    /// Per locale, `Content-Language` and the `Vary` of a read; `Vary: X-Session-Id` alone and
    /// no `Content-Language` for a menu without locales.
    let localeHeaders: [[(name: String, value: String)]]
    /// The `Vary` of a session read (`localeHeaders`' last), the one of them a `304` carries:
    /// RFC 9110 §15.4.5 keeps representation metadata such as `Content-Language` off a 304 (the
    /// client's cached copy already has it).
    let readVary: String
    /// Every node's folded texts (titles in every locale), built with the menu (load and reload).
    package let searchIndex: SearchIndex
    /// The filtered views of recent searches, shared by every session of this menu.
    package let searchCache: SearchCache
    /// What is not available now, as this menu shows it. A change of availability serves a copy
    /// of this menu with another (``with(_:)``), sharing everything else.
    package let availability: ServedAvailability
    /// The menus ``at(_:)`` made for instants, of this availability.
    private let instants = SpanCache<ServedMenu>()
    /// ``Menu/attributeTypes()``, read on the first `GET /menu` and kept.
    private let attributeTypesRead = Mutex<[(name: String, types: [String])]?>(nil)

    /// The attribute names and the JSON types of their values (``Menu/attributeTypes()``): one
    /// pass over the attribute objects on the first call, kept for the menu's life.
    var attributeTypes: [(name: String, types: [String])] {
        if let read = attributeTypesRead.withLock({ $0 }) { return read }
        let read = generation.menu.attributeTypes()
        attributeTypesRead.withLock { $0 = read }
        return read
    }

    /// `Content-Language` and `Vary` for an answer that is no session read (`/changes`, `/nodes`):
    /// none for a menu without locales, whose answers do not vary by language.
    func languageHeaders(_ locale: Int) -> [(name: String, value: String)] {
        localeKeys.isEmpty ? [] : localeHeaders[locale]
    }

    /// The menu of `generation`, encoded, with `overlay` (checked against it by the caller)
    /// advanced to `now`: what was kept, or served on the menu before, may be from before an
    /// opening or a closing of this menu's hours.
    init(
        _ generation: MenuGeneration, published: Menu? = nil, hiddenIDs: [String] = [],
        availability overlay: AvailabilityOverlay = AvailabilityOverlay(),
        droppedAtReload: [String] = [], availabilityHistory: [AvailabilityOverlay] = [], now: Timestamp = .now
    ) {
        self.generation = generation
        let published = published ?? generation.menu
        self.published = published
        self.hiddenIDs = hiddenIDs
        let menu = generation.menu
        let versionPrefix = SessionEntityTag.prefix(version: menu.version)
        entityTagPrefixes =
            menu.locales.isEmpty
            ? [versionPrefix] : menu.locales.map { versionPrefix + Array($0.utf8) + [UInt8(ascii: "-")] }
        localeKeys = menu.locales.map(LanguageTag.lowercased)
        let vary = menu.locales.isEmpty ? "X-Session-Id" : "X-Session-Id, Accept-Language"
        readVary = vary
        localeHeaders =
            menu.locales.isEmpty ? [[("Vary", vary)]] : menu.locales.map { [("Content-Language", $0), ("Vary", vary)] }
        let base = EncodedMenu(menu: menu)
        encoded = [base] + menu.localeIndices.dropFirst().map { EncodedMenu(localizing: base, menu: menu, locale: $0) }
        searchIndex = SearchIndex(menu: menu)
        var writer = JSONWriter()
        writer.string(menu.version)
        versionJSON = writer.bytes
        searchCache = SearchCache()
        let hours = MenuHours(menu: published)
        self.hours = hours
        availability = ServedAvailability(
            overlay.advanced(to: now, hours: hours).overlay, on: menu, hours: hours, tagPrefixes: entityTagPrefixes,
            droppedAtReload: droppedAtReload,
            history: availabilityHistory, now: now)
    }

    /// The published menu's opening hours (nil when no node has any), with their cache of
    /// answers: one value for every copy of this menu. A hidden node's hours count too: they say
    /// when it comes back.
    package let hours: MenuHours?

    /// This menu as it will show at `instant`: the overlay advanced to it (entries due by then
    /// ended, the hours then applied) under the same revision, since no feed serves it, and a
    /// tag naming the instant (`t<milliseconds>-`; a later instant that shows the same gets the
    /// same menu and tag from ``instants``). For `?at=`; O(k · depth + n/64) like a change, O(8)
    /// from the cache.
    /// An instant no span asked before costs a computation (375 µs on the 1.1M menu with 1,000
    /// scheduled groups): it takes one of `slots` (the budget uncached searches share), and nil
    /// comes back when all are taken.
    func at(_ instant: Timestamp, slots: SearchBuildSlots) -> ServedMenu? {
        if let known = instants.value(at: instant.milliseconds) { return known }
        guard let then = slots.run({ computedAt(instant) }) else { return nil }
        // It shows the same until its next change: later instants before it share it (and its tag).
        let until = then.availability.nextChangeAt?.milliseconds ?? instant.milliseconds + 3_600_000
        instants.keep(then, from: instant.milliseconds, until: until)
        return then
    }

    private func computedAt(_ instant: Timestamp) -> ServedMenu {
        let now = availability.overlay
        let then = now.advanced(to: instant, hours: hours).overlay
        let overlay = AvailabilityOverlay(
            revision: now.revision, entries: then.entries, closedByHours: then.closedByHours)
        let prefixes = entityTagPrefixes.map { $0 + Array("t\(instant.milliseconds)-".utf8) }
        return ServedMenu(
            sharing: self,
            availability: ServedAvailability(
                overlay, on: generation.menu, hours: hours, tagPrefixes: prefixes, now: instant))
    }

    /// This menu with `availability` instead (everything else shared, not copied). O(1) here.
    private init(sharing base: ServedMenu, availability: ServedAvailability) {
        generation = base.generation
        published = base.published
        hiddenIDs = base.hiddenIDs
        encoded = base.encoded
        versionJSON = base.versionJSON
        entityTagPrefixes = base.entityTagPrefixes
        localeKeys = base.localeKeys
        localeHeaders = base.localeHeaders
        readVary = base.readVary
        searchIndex = base.searchIndex
        searchCache = base.searchCache
        hours = base.hours
        self.availability = availability
    }

    /// This menu serving `overlay` (its ids checked against the menu by the caller). O(k · depth +
    /// n/64) for k unavailable nodes (``ServedAvailability``).
    func with(_ overlay: AvailabilityOverlay, now: Timestamp) -> ServedMenu {
        ServedMenu(
            sharing: self,
            availability: ServedAvailability(
                overlay, on: generation.menu, hours: hours, tagPrefixes: entityTagPrefixes,
                history: availability.historyAfter, now: now))
    }
}

extension ServedMenu {
    /// The ids of the outermost nodes of `published` that `overlay`, advanced to `now` by `hours`,
    /// leaves out of the listing, sorted (``ResolvedAvailability/hiddenRoots()``): none when no
    /// node hides. O(k · depth) for k unavailable nodes, nothing when no node hides.
    static func hiddenIDs(
        of published: Menu, showing overlay: AvailabilityOverlay, hours: MenuHours?, now: Timestamp
    ) -> [String] {
        guard published.hidesAnyWhenUnavailable else { return [] }
        let advanced = overlay.advanced(to: now, hours: hours).overlay
        return ResolvedAvailability(advanced, on: published).hiddenRoots().map(published.id(of:)).sorted()
    }
}
