import MenuClient

/// The answer to one search the browser asked for, as it comes back to the app's loop.
public struct SearchResult: Sendable {
    /// The ``SearchPanel/generation`` of the text it answers.
    public var generation: Int
    public var outcome: Result<MenuSearchPage, MenuClientError>
    public init(generation: Int, outcome: Result<MenuSearchPage, MenuClientError>) {
        self.generation = generation
        self.outcome = outcome
    }
}

/// The search line and its list of matches: the text typed, the server's matches for it, the
/// one selected. ``MenuBrowser`` holds one while the user searches; the tree behind it is not
/// touched until a match is chosen.
///
/// Invariant: ``matches`` answer ``answered`` (nil: no answer yet, or the text is empty);
/// ``selected`` is an index into ``matches`` (0 when there are none); ``generation`` grows with
/// every edit and a ``SearchResult`` of another generation is dropped, so a slow answer for an
/// older text never replaces a newer one. Cost: O(1) an edit; ``lines(width:height:)`` O(height × width).
public struct SearchPanel: Sendable {
    public private(set) var text = ""
    public private(set) var generation = 0
    public private(set) var answered: String?
    public private(set) var matches: [MenuSearchMatch] = []
    /// Matches in all (``matches`` holds the first page of them).
    public private(set) var total = 0
    public private(set) var selected = 0
    /// Why the last search failed (the error's message), nil after an answer or an edit.
    public private(set) var problem: MenuClientError?

    public init() {}

    /// Whether ``matches`` are the answer for the text as it is now.
    public var isCurrent: Bool { answered == text }
    public var selectedMatch: MenuSearchMatch? { matches.indices.contains(selected) ? matches[selected] : nil }
    /// Whether the server answered that it has no `GET /search` (404 `not_found`, 405): an older server.
    public var serverHasNoSearch: Bool { problem?.code == "not_found" || problem?.code == "method_not_allowed" }

    /// The text becomes `newText`: a new generation; the matches shown stay until its answer comes.
    public mutating func edit(_ newText: String) {
        text = newText
        generation += 1
        problem = nil
        if newText.isEmpty { (answered, matches, total, selected) = (nil, [], 0, 0) }
    }

    /// Takes `result` if it answers the current text; false (dropped) when it is stale.
    public mutating func accept(_ result: SearchResult) -> Bool {
        guard result.generation == generation, !text.isEmpty else { return false }
        switch result.outcome {
        case .success(let page):
            (answered, matches, total, selected, problem) = (text, page.matches, page.total, 0, nil)
        case .failure(let error):
            problem = error
        }
        return true
    }

    public mutating func move(by lines: Int) {
        guard !matches.isEmpty else { return }
        selected = min(max(0, selected + lines), matches.count - 1)
    }

    // MARK: Drawing

    /// How many of the window's `height` lines the list takes: a rule and the matches shown (at
    /// most half the window), 0 without matches.
    func listHeight(in height: Int) -> Int {
        guard !matches.isEmpty, height >= 2 else { return 0 }
        return 1 + min(matches.count, max(1, height / 2 - 1))
    }

    /// The list's lines at the bottom of a window `height` lines high: a rule, then one line a
    /// match showing its path (`酒水 › 啤酒 › 青島啤酒`), the selected one highlighted, scrolled to keep it in view.
    func lines(width: Int, height: Int) -> [ScreenLine] {
        let shown = listHeight(in: height) - 1
        guard shown > 0 else { return [] }
        let first = min(max(0, selected - shown + 1), matches.count - shown)
        var lines = [
            RowFormatter.assemble(
                [Span(String(repeating: "─", count: width), .dim)], right: [], width: width, filler: .dim)
        ]
        for position in first ..< first + shown {
            let match = matches[position]
            let isSelected = position == selected
            var left = [Span(isSelected ? " ▸ " : "   ", isSelected ? .reversed : .plain)]
            for ancestor in match.path { left.append(Span(ancestor.title + " › ", isSelected ? .reversed : .dim)) }
            left.append(Span(match.title, isSelected ? .reversedBold : .bold))
            let place = match.index.map { "row \($0 + 1)" } ?? "hidden"
            lines.append(
                RowFormatter.assemble(
                    left, right: [Span("  " + place + " ", isSelected ? .reversed : .dim)], width: width,
                    filler: isSelected ? .reversed : .plain))
        }
        return lines
    }

    /// The status line while searching: the text with a caret, and what the server answered.
    func statusLine(width: Int) -> ScreenLine {
        let state: Span
        if serverHasNoSearch {
            state = Span("no search on this server: Enter jumps to an id or a fetched title", .dim)
        } else if let problem {
            state = Span(problem.description, .error)
        } else if text.isEmpty {
            state = Span("type to search, ↑↓ choose, Enter shows, Esc back", .dim)
        } else if !isCurrent {
            state = Span("searching…", .dim)
        } else if matches.isEmpty {
            state = Span("no match", .plain)
        } else {
            state = Span(
                matches.count < total
                    ? "\(matches.count) of \(total) matches" : total == 1 ? "1 match" : "\(total) matches")
        }
        return RowFormatter.assemble(
            [Span("search: " + text + "▏", .bold)], right: [Span("  "), state],
            width: width, filler: .plain)
    }
}
