/// One search: a text (folded with ``SearchFolding``) and attribute filters, every part of which
/// must hold for a node to match. At least one part is given.
///
/// Invariant: `text` is nil or 1 ... ``maxLength`` characters and folds to at least one byte
/// (`folded`, empty exactly when `text` is nil); `filters` holds at most ``maxFilters``, sorted and
/// without repeats, so two queries asking the same thing are equal (the cache key).
public struct SearchQuery: Sendable, Hashable {
    /// The most characters a query text may have.
    public static let maxLength = 200
    /// The most filters one query may have.
    public static let maxFilters = 16

    public let text: String?
    public let folded: [UInt8]
    public let filters: [AttributeFilter]

    public init(text: String?, filters: [AttributeFilter] = []) throws(SearchQueryError) {
        if let text {
            guard !text.isEmpty else { throw .emptyText }
            guard text.count <= Self.maxLength else { throw .textTooLong(characters: text.count) }
            folded = SearchFolding.fold(text)
            guard !folded.isEmpty else { throw .emptyText }
        } else {
            folded = []
        }
        guard text != nil || !filters.isEmpty else { throw .nothingAsked }
        guard filters.count <= Self.maxFilters else { throw .tooManyFilters(count: filters.count) }
        self.text = text
        self.filters = Array(Set(filters)).sorted { ($0.name, $0.value) < ($1.name, $1.value) }
    }
}

/// `ATTR:VALUE`: the node's attribute `name` equals `value`, compared by the attribute's JSON type
/// on that node: a string exactly (the value as decoded from the URL), a boolean when `value` is
/// `true` or `false`, a number when `value` is a JSON number of equal value (`2`, `2.0` and `2e0`
/// all equal 2). A node without the attribute, or with a null, array or object value, never matches.
///
/// Invariant: `name` is not empty (it is everything before the first `:`; `value` may hold `:`).
public struct AttributeFilter: Sendable, Hashable {
    public let name: String
    public let value: String

    /// Parses `ATTR:VALUE`; refuses a text with no `:` or nothing before it.
    public init(parsing text: String) throws(SearchQueryError) {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw .malformedFilter(String(text.prefix(80)))
        }
        name = String(text[..<colon])
        value = String(text[text.index(after: colon)...])
    }

    public init(name: String, value: String) {
        precondition(!name.isEmpty, "an attribute filter names an attribute")
        self.name = name
        self.value = value
    }

    /// Whether `attribute` (a node's value of ``name``, nil when it has none) satisfies the filter. O(|value|).
    public func holds(for attribute: JSONValue?) -> Bool {
        switch attribute {
        case .string(let text): return text == value
        case .bool(let flag): return value == (flag ? "true" : "false")
        case .integer(let integer):
            if let exact = Int64(value) { return exact == integer }
            return JSONNumber(text: value).map { $0.doubleValue == Double(integer) } ?? false
        case .number(let number):
            return JSONNumber(text: value).map { $0.doubleValue == number.doubleValue } ?? false
        case .null, .array, .object, nil: return false
        }
    }
}

/// Why a search cannot run; each message says what to send instead.
public enum SearchQueryError: Error, Sendable, Equatable, CustomStringConvertible {
    case emptyText
    case textTooLong(characters: Int)
    /// Neither a text nor a filter.
    case nothingAsked
    case tooManyFilters(count: Int)
    /// A filter that is not `ATTR:VALUE` (as given, cut to 80 characters).
    case malformedFilter(String)
    /// A filter naming an attribute no node of the menu has.
    case unknownAttribute(String)

    /// Whether it is about the filters rather than the text.
    public var isAboutFilters: Bool {
        switch self {
        case .emptyText, .textTooLong, .nothingAsked: false
        case .tooManyFilters, .malformedFilter, .unknownAttribute: true
        }
    }

    public var description: String {
        switch self {
        case .emptyText:
            "q is empty; give the text to look for (1 to \(SearchQuery.maxLength) characters), or leave q out for the whole tree"
        case .textTooLong(let count): "q has \(count) characters; a query may have at most \(SearchQuery.maxLength)"
        case .nothingAsked: "give q=TEXT, filter=ATTR:VALUE or both"
        case .tooManyFilters(let count): "\(count) filters given; at most \(SearchQuery.maxFilters) may be combined"
        case .malformedFilter(let text): "filter \"\(text)\" is not ATTR:VALUE (an attribute name, a colon, the value)"
        case .unknownAttribute(let name):
            "filter names attribute \"\(name.prefix(80))\", which no node of this menu has"
        }
    }
}
