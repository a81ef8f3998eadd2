/// Why a menu config was refused: every problem found (up to ``MenuConfigError/problemLimit``),
/// each naming the JSON path and the offending value.
public struct MenuConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// At most this many problems are collected; the rest are counted in ``omittedCount``.
    public static let problemLimit = 100

    public var problems: [ConfigProblem]
    /// Problems found beyond ``problemLimit``.
    public var omittedCount: Int

    public init(problems: [ConfigProblem], omittedCount: Int = 0) {
        self.problems = problems
        self.omittedCount = omittedCount
    }

    /// The file could not be read at all (its one problem is ``ConfigProblem/Kind/unreadable(reason:)``).
    public var isUnreadableFile: Bool {
        guard problems.count == 1, case .unreadable = problems[0].kind else { return false }
        return true
    }

    /// Every problem, one a line; a file that could not be read is one line, `cannot read FILE: WHY`.
    public var description: String {
        if isUnreadableFile { return problems[0].description }
        var lines = problems.map(\.description)
        if omittedCount > 0 { lines.append("… and \(omittedCount) more problems") }
        let noun = problems.count + omittedCount == 1 ? "problem" : "problems"
        return "invalid menu config (\(problems.count + omittedCount) \(noun)):\n"
            + lines.map { "  " + $0 }.joined(separator: "\n")
    }
}

/// One problem in a menu config, at a JSON path such as `items[2].items[0].id`, naming the id of
/// the node it is in when that node has a valid one (a path alone is hard to find in a big menu).
public struct ConfigProblem: Sendable, Equatable, CustomStringConvertible {
    /// What is wrong; each case's message says how to fix it.
    public enum Kind: Sendable, Equatable {
        /// The file is not JSON. Line and column are 1-based, when known.
        case invalidJSON(line: Int?, column: Int?)
        case unknownKey
        case missingKey
        case wrongType(expected: String)
        case emptyTitle
        case invalidID
        /// `firstPath` is where the id was first used.
        case duplicateID(firstPath: String)
        case expandedOnRow
        /// A key given twice in one object (a node, the document, or inside `attributes`).
        case duplicateKey
        case tooDeep(limit: Int)
        case tooManyNodes(limit: Int)
        case unreadable(reason: String)
        /// A locale that is not a BCP 47 language tag (a title's key, `defaultLocale`, `locales`).
        case malformedLocaleTag
        /// A title object without the default locale's text.
        case missingDefaultLocaleTitle(defaultLocale: String)
        /// A title in a locale the document's `locales` does not list (`locales` as written).
        case localeNotListed(locales: String)
        /// `locales` without the `defaultLocale`.
        case defaultLocaleNotListed(defaultLocale: String)
        /// A title object, or `locales`, in a document without `defaultLocale`.
        case localizedTitleWithoutDefaultLocale
        /// The menu built from the config breaks a structural invariant (a menu-server bug the
        /// load check caught; `value` names the node).
        case inconsistentStructure(detail: String)
        /// A key an object of `hours` or `exceptions` does not take; `allowed` lists those it does.
        case unknownScheduleKey(allowed: String)
        /// Not `HH:MM` from 00:00 to 23:59 (`to` may be 24:00).
        case invalidTimeOfDay
        /// Not one of mon, tue, wed, thu, fri, sat, sun.
        case invalidDay
        /// `from` equal to `to`: empty, or a whole day meant as 00:00-24:00.
        case emptyTimeRange
        /// Not a `YYYY-MM-DD` date of the calendar.
        case invalidDate
        /// A date given twice in one node's `exceptions`; `firstPath` is the first.
        case repeatedExceptionDate(firstPath: String)
        /// Two ranges of one exception that overlap; `firstPath` is the other.
        case overlappingRanges(firstPath: String)
        /// An exception with neither `"closed": true` nor `hours`, or with both.
        case exceptionWithoutHours
        /// `timeZone` names no zone of the machine's time zone database.
        case unknownTimeZone(reason: String)
        /// `hours` or `exceptions` in a menu without a top-level `timeZone`.
        case hoursWithoutTimeZone
        /// `minSelect` or `maxSelect` on a row: only a group's leaves are chosen from.
        case selectionRuleOnRow
        /// `minSelect` above `maxSelect`.
        case selectionRuleConflict(maxSelect: Int)
        /// `minSelect` above the leaves the group has: it could never be met.
        case minSelectAboveLeaves(leaves: Int)
    }

    /// The JSON path of the problem; `$` is the document itself.
    public var path: String
    public var kind: Kind
    /// The offending value (or key) as written in the config, shortened.
    public var value: String
    /// The `id` of the node the problem is in; nil when it has no valid id or the problem is in
    /// no node (the document, an element of `items` that is not a node).
    public var nodeID: String?

    public init(path: String, kind: Kind, value: String, nodeID: String? = nil) {
        self.path = path
        self.kind = kind
        self.value = value
        self.nodeID = nodeID
    }

    public var description: String {
        let what: String
        switch kind {
        case .invalidJSON(let line, let column):
            let place = line.map { l in "at line \(l)" + (column.map { ", column \($0)" } ?? "") } ?? ""
            return "not valid JSON \(place)".trimmingTrailingSpace() + (value.isEmpty ? "" : ": \(value)")
        case .unknownKey:
            what =
                "unknown key \(value); allowed keys are id, title, items, expanded, attributes, hours, exceptions (and title, items, defaultLocale, locales, searchable, timeZone at the top)"
        case .missingKey: what = "missing required key \(value)"
        case .wrongType(let expected): what = "must be \(expected), found \(value)"
        case .emptyTitle: what = "title must be a non-empty string, found \(value)"
        case .invalidID: what = "id must be 1 to 128 characters from A-Z a-z 0-9 . _ ~ -, found \(value)"
        case .duplicateID(let firstPath): what = "duplicate id \(value), first used at \(firstPath)"
        case .expandedOnRow: what = "\"expanded\" is only allowed on groups (nodes with \"items\"), found \(value)"
        case .duplicateKey: what = "duplicate key \(value); give each key once per object"
        case .tooDeep(let limit): what = "nesting deeper than \(limit) levels"
        case .tooManyNodes(let limit): what = "more than \(limit) nodes"
        case .malformedLocaleTag:
            what = "a locale must be a BCP 47 language tag such as en, zh-Hant or pt-BR, found \(value)"
        case .missingDefaultLocaleTitle(let tag):
            what =
                "title has no text in the default locale \(tag.jsonQuoted) (defaultLocale), found \(value); every title needs one"
        case .localeNotListed(let locales):
            what = "locale \(value) is not in \"locales\" \(locales); list it there or remove this title"
        case .defaultLocaleNotListed(let tag):
            what = "\"locales\" must include the defaultLocale \(tag.jsonQuoted), found \(value)"
        case .localizedTitleWithoutDefaultLocale:
            what =
                "titles per locale need a top-level \"defaultLocale\" naming the locale every title has, found \(value)"
        case .unknownScheduleKey(let allowed): what = "unknown key \(value); allowed keys here are \(allowed)"
        case .invalidTimeOfDay: what = "must be a time HH:MM from 00:00 to 23:59 (\"to\" may be 24:00), found \(value)"
        case .invalidDay: what = "must be one of mon, tue, wed, thu, fri, sat, sun, found \(value)"
        case .emptyTimeRange:
            what = "\"from\" and \"to\" are both \(value): give different times (00:00 to 24:00 for a whole day)"
        case .invalidDate: what = "must be a date YYYY-MM-DD, found \(value)"
        case .repeatedExceptionDate(let firstPath):
            what = "date \(value) already has an exception at \(firstPath); give each date once"
        case .overlappingRanges(let firstPath): what = "range \(value) overlaps the range at \(firstPath)"
        case .exceptionWithoutHours:
            what = "an exception needs either \"closed\": true or \"hours\" (not both), found \(value)"
        case .unknownTimeZone(let reason): what = "time zone \(value) cannot be used: \(reason)"
        case .hoursWithoutTimeZone:
            what =
                "\(value) needs a top-level \"timeZone\" (an IANA name such as \"Europe/Paris\") to say whose clock the times are on"
        case .selectionRuleOnRow:
            what = "\"minSelect\" and \"maxSelect\" are only allowed on groups (nodes with \"items\"), found \(value)"
        case .selectionRuleConflict(let maxSelect):
            what = "minSelect \(value) is above maxSelect \(maxSelect): no selection could keep both"
        case .minSelectAboveLeaves(let leaves):
            what = "minSelect \(value) is above the \(leaves) rows the group has: it could never be met"
        case .unreadable(let reason): return "cannot read \(value): \(reason)"
        case .inconsistentStructure(let detail):
            return
                "the menu built from this config is inconsistent at \(value): \(detail); this is a menu-server bug, please report it with the config"
        }
        return path + (nodeID.map { " (node \"\($0)\")" } ?? "") + ": " + what
    }
}

extension String {
    fileprivate func trimmingTrailingSpace() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
