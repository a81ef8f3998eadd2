/// Localized titles (docs/config.md "Localized titles"): a `title` is a string, in the default locale, or
/// an object of BCP 47 tags to strings; the document names `defaultLocale` and may list
/// `locales`. The parser checks each tag's shape and reports a tag given twice (case-insensitive,
/// as tags compare); what needs the whole document (is the default there, is every tag listed)
/// waits for ``MenuBuilder/resolveLocales()``, since `defaultLocale` may come after `items`.
extension ConfigParser {
    /// A node's (or, for position 0, the menu's) `title`.
    mutating func parseTitle(of position: Int32) throws(SyntaxError) {
        if peek() == UInt8(ascii: "\"") {
            let title = try parseString()
            if position == 0 { builder.title = title } else { builder.setTitle(title, of: position) }
            return
        }
        guard peek() == UInt8(ascii: "{") else {
            try reportWrongType(key: "title", expected: "a string or an object of language tags to strings")
            return
        }
        index += 1
        var first = true
        var members = 0
        var seen: [[UInt8]] = []
        while let tag = try nextKey(&first) {
            members += 1
            let key = JSONPathStep.path([.key("title"), .key(tag)])
            guard peek() == UInt8(ascii: "\"") else {
                try reportWrongType(key: key, expected: "a string")
                continue
            }
            let title = try parseString()
            guard LanguageTag.isWellFormed(tag) else {
                builder.report(.init(key: key, kind: .malformedLocaleTag, value: tag.jsonQuoted))
                continue
            }
            let lowered = LanguageTag.lowercased(tag)
            guard !seen.contains(lowered) else {
                builder.report(.init(key: key, kind: .duplicateKey, value: tag.jsonQuoted))
                continue
            }
            seen.append(lowered)
            builder.setTitle(title, of: position, locale: tag, lowercased: lowered, key: key)
        }
        if members == 0 { builder.report(.init(key: "title", kind: .emptyTitle, value: "{}")) }
    }

    /// The document's `locales`: an array of distinct well-formed tags.
    mutating func parseLocales() throws(SyntaxError) {
        guard peek() == UInt8(ascii: "[") else {
            try reportWrongType(key: "locales", expected: "an array of language tags")
            return
        }
        index += 1
        var listed: [String] = []
        var ordinal = 0
        while try nextElement(first: ordinal == 0) {
            let key = "locales[\(ordinal)]"
            ordinal += 1
            guard peek() == UInt8(ascii: "\"") else {
                try reportWrongType(key: key, expected: "a language tag (a string)")
                continue
            }
            let tag = try parseString()
            if !LanguageTag.isWellFormed(tag) {
                builder.report(.init(key: key, kind: .malformedLocaleTag, value: tag.jsonQuoted))
            } else if listed.contains(where: { LanguageTag.lowercased($0) == LanguageTag.lowercased(tag) }) {
                builder.report(.init(key: key, kind: .duplicateKey, value: tag.jsonQuoted))
            } else {
                listed.append(tag)
            }
        }
        if ordinal == 0 {
            builder.report(
                .init(key: "locales", kind: .wrongType(expected: "a non-empty array of language tags"), value: "[]"))
        }
        builder.listedLocales = listed
    }
}
