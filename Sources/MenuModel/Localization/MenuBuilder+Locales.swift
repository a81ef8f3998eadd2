/// Localized titles while building: each tag's titles are kept in a table of their own as the
/// parser reads them, and ``resolveLocales()`` checks them against `defaultLocale` and `locales`
/// and lays them out as ``Menu/Storage`` keeps them once the whole document is read.
extension MenuBuilder {
    mutating func setDefaultLocale(_ tag: String) {
        guard LanguageTag.isWellFormed(tag) else {
            report(.init(key: "defaultLocale", kind: .malformedLocaleTag, value: tag.jsonQuoted))
            return
        }
        defaultLocaleTag = tag
    }

    /// One entry of a title object (the tag already checked, given once in that object).
    mutating func setTitle(_ title: String, of position: Int32, locale tag: String, lowercased: [UInt8], key: String) {
        if Self.isBlank(title) { report(.init(key: key, kind: .emptyTitle, value: quoted(title))) }
        let table: Int
        if let found = localeTables.firstIndex(where: { $0.lowercased == lowercased }) {
            table = found
        } else {
            table = localeTables.count
            localeTables.append((tag, lowercased, []))
        }
        let p = Int(position)
        if localeTables[table].titles.count <= p {
            localeTables[table].titles.append(
                contentsOf: repeatElement("", count: p + 1 - localeTables[table].titles.count))
        }
        localeTables[table].titles[p] = title
    }

    /// Checks the locales once the document is read and fills ``locales``, ``titles`` (the
    /// default locale's), ``otherTitles`` and ``otherRootTitles``. O(nodes · locales).
    ///
    /// `locales` is the default first, then `locales` as listed or, without that list, the tags
    /// in the order the config first uses them. A node that gives no title in some locale shows
    /// its default-locale title there (the same string, so no second copy of its text).
    mutating func resolveLocales() {
        guard let defaultTag = defaultLocaleTag else {
            if let table = localeTables.first {
                let node = table.titles.firstIndex { !$0.isEmpty } ?? 0
                report(
                    node: node, key: "title", kind: .localizedTitleWithoutDefaultLocale,
                    value: "{\(table.tag.jsonQuoted): …}")
            } else if let listed = listedLocales {
                report(node: 0, key: "locales", kind: .localizedTitleWithoutDefaultLocale, value: Self.list(listed))
            }
            return
        }
        let defaultKey = LanguageTag.lowercased(defaultTag)
        var order = [defaultTag]
        if let listed = listedLocales {
            if !listed.contains(where: { LanguageTag.lowercased($0) == defaultKey }) {
                report(
                    node: 0, key: "locales", kind: .defaultLocaleNotListed(defaultLocale: defaultTag),
                    value: Self.list(listed))
            }
            order += listed.filter { LanguageTag.lowercased($0) != defaultKey }
            for table in localeTables where !listed.contains(where: { LanguageTag.lowercased($0) == table.lowercased })
            {
                let node = table.titles.firstIndex { !$0.isEmpty } ?? 0
                report(
                    node: node, key: JSONPathStep.path([.key("title"), .key(table.tag)]),
                    kind: .localeNotListed(locales: Self.list(listed)),
                    value: table.tag.jsonQuoted)
            }
        } else {
            order += localeTables.map(\.tag).filter { LanguageTag.lowercased($0) != defaultKey }
        }
        let tables = localeTables
        localeTables = []
        if let defaultTable = tables.first(where: { $0.lowercased == defaultKey })?.titles {
            if title == nil, defaultTable.first.map({ !$0.isEmpty }) == true { title = defaultTable[0] }
            for node in 1 ..< min(defaultTable.count, titles.count) where titles[node].isEmpty {
                titles[node] = defaultTable[node]
            }
        }
        // Every title object must have the default locale; a string title is in it already.
        var reported = Set<Int>()
        for table in tables {
            for node in table.titles.indices
            where !table.titles[node].isEmpty && (node == 0 ? title == nil : titles[node].isEmpty) {
                guard reported.insert(node).inserted else { continue }
                report(
                    node: node, key: "title", kind: .missingDefaultLocaleTitle(defaultLocale: defaultTag),
                    value: "{\(table.tag.jsonQuoted): …}")
            }
        }
        locales = order
        for tag in order.dropFirst() {
            guard let table = tables.first(where: { $0.lowercased == LanguageTag.lowercased(tag) })?.titles else {
                otherTitles.append(titles)  // no title in this locale: the default's array itself, shared
                otherRootTitles.append(title)
                continue
            }
            otherRootTitles.append(table.first.flatMap { $0.isEmpty ? nil : $0 } ?? title)
            var localized = titles
            for node in 1 ..< min(table.count, titles.count) where !table[node].isEmpty {
                localized[node] = table[node]
            }
            otherTitles.append(localized)
        }
    }

    /// `["en", "zh-Hant"]`: tags as a config lists them, for a message.
    private static func list(_ tags: [String]) -> String {
        "[" + tags.map(\.jsonQuoted).joined(separator: ", ") + "]"
    }
}
