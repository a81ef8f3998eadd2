import MenuClient

/// The terminal app's state and behaviour, without the terminal: keys and table events in, a
/// ``Frame`` out. The screen is a header line, a window of rows over the table (``Viewport``)
/// and a status line (position, count, the last message or error, or the line being typed).
///
/// Keys: ↑/↓ (k/j), PageUp/PageDown (b/f), Home/End (g/G), Enter opens or closes the group
/// under the cursor (on a dish, shows it in the status line), Space chooses or clears the row
/// under the cursor (a group: every leaf under it; ✓ marks what is chosen), ← closes a group or goes to the
/// enclosing one, → opens a group, digits then Enter go to that row (numbered from 1 as shown),
/// `/` searches (MenuBrowser+Search.swift: the server's matches listed as you type, Enter reveals
/// the one chosen); `e`/`c` expand or collapse every group (`PUT /expansion`), Ctrl-L redraws,
/// `q` quits. Escape cancels what is being typed.
///
/// Invariant: ``viewport`` has the source's row count after every handled key or event (each
/// splice the source reports is applied to it, in order); ``search`` is non-nil exactly while
/// ``typing`` is `.search`. Cost: ``frame()`` O(height × width).
@MainActor
public final class MenuBrowser {
    public enum Typing: Sendable, Hashable {
        case none
        case rowNumber(String)
        case search
    }

    public let source: any MenuRowSource
    public let title: String
    public private(set) var viewport: Viewport
    public internal(set) var typing = Typing.none
    /// The search line and its matches while the user searches.
    public internal(set) var search: SearchPanel?
    /// The answers of the searches typing starts (debounced, in the background): the app hands
    /// each to ``handle(_:)-(SearchResult)`` in its loop.
    public let searchResults: AsyncStream<SearchResult>
    let searchSink: AsyncStream<SearchResult>.Continuation
    /// The search waiting out its debounce or in flight; cancelled by the next edit.
    var pendingSearch: Task<Void, Never>?
    /// The status line's message: what the last key did, or the last error (shown in red).
    public internal(set) var message: (text: String, isError: Bool)?
    public private(set) var wantsToQuit = false
    public private(set) var width: Int
    public private(set) var painter = FramePainter()
    /// Title matching scans at most this many cached rows (the cache of a 1.1M-row table is not walked).
    public static let titleScanLimit = 200_000

    public init(source: any MenuRowSource, title: String, width: Int, height: Int) {
        self.source = source
        self.title = title
        self.width = max(1, width)
        viewport = Viewport(count: source.count, height: max(1, height - 2))
        (searchResults, searchSink) = AsyncStream.makeStream(of: SearchResult.self)
    }

    public func resize(width: Int, height: Int) {
        self.width = max(1, width)
        viewport.resize(height: max(1, height - 2))
        painter.invalidate()
    }

    /// The bytes that bring the terminal to the current state (only the lines that changed).
    public func paint() -> String { painter.paint(frame()) }

    // MARK: Keys

    public func handle(_ key: Key) async {
        switch typing {
        case .none: await browse(key)
        case .rowNumber(let digits): await typeRowNumber(key, digits)
        case .search: await typeSearch(key)
        }
    }

    private func browse(_ key: Key) async {
        message = nil
        switch key {
        case .up, .character("k"): viewport.move(by: -1)
        case .down, .character("j"): viewport.move(by: 1)
        case .pageUp, .character("b"): viewport.pageUp()
        case .pageDown, .character("f"): viewport.pageDown()
        case .character(" "): await chooseOrClear()
        case .home, .character("g"): viewport.home()
        case .end, .character("G"): viewport.end()
        case .enter: await openOrClose(expand: nil)
        case .right: await openOrClose(expand: true)
        case .left: await closeOrGoUp()
        case .character("/"): startSearch()
        case .character(let digit) where digit.isASCII && digit.isNumber: typing = .rowNumber(String(digit))
        case .character("e"): await write(.setAll(.expanded), done: "every group expanded")
        case .character("c"): await write(.setAll(.collapsed), done: "every group collapsed")
        case .character("q"), .ctrl("c"), .ctrl("d"): wantsToQuit = true
        case .ctrl("l"): painter.invalidate()
        default: break
        }
    }

    private func typeRowNumber(_ key: Key, _ digits: String) async {
        switch key {
        case .character(let digit) where digit.isASCII && digit.isNumber: typing = .rowNumber(digits + String(digit))
        case .backspace: typing = digits.count > 1 ? .rowNumber(String(digits.dropLast())) : .none
        case .enter:
            typing = .none
            guard let number = Int(digits), number >= 1, number <= source.count else {
                message = ("no row \(digits): rows are 1 to \(source.count)", true)
                return
            }
            viewport.go(to: number - 1)
        case .escape: typing = .none
        default: break
        }
    }

    // MARK: Actions

    private func openOrClose(expand: Bool?) async {
        guard let row = source.row(at: viewport.cursor) else { return }
        guard row.isGroup else {
            if expand == nil { message = (describe(row), false) }
            return
        }
        if let expand, row.isExpanded == expand { return }
        let verb = row.isExpanded == true ? "closed" : "opened"
        await write(.toggle(row.id), done: "\(verb) \(row.title)")
    }

    /// Space: chooses the row under the cursor, or every leaf under a group, when it is not
    /// chosen (a group: not every leaf), else clears it.
    private func chooseOrClear() async {
        guard let row = source.row(at: viewport.cursor) else { return }
        let choose = row.isGroup ? row.selection != .all : row.selected != true
        if choose, !row.isGroup, let availability = row.availability {
            message = ("\(row.title) cannot be chosen: \(RowFormatter.availabilityText(availability))", true)
            return
        }
        await write(.select(row.id, choose), done: "\(choose ? "chose" : "cleared") \(row.title)")
    }

    private func closeOrGoUp() async {
        guard let row = source.row(at: viewport.cursor) else { return }
        if row.isGroup, row.isExpanded == true { return await openOrClose(expand: false) }
        guard let parent = row.parentId else { return }
        // The enclosing group is the nearest row above at a smaller depth.
        var position = viewport.cursor - 1
        while position >= 0 {
            if let above = source.row(at: position), above.depth < row.depth, above.id == parent {
                return viewport.go(to: position)
            }
            position -= 1
            if viewport.cursor - position > viewport.height * 4 { break }
        }
        await write(.reveal(parent), done: nil)
    }

    /// Goes to the node with id `text` (revealing it), else to the next fetched row whose title
    /// or English name contains `text` (case-insensitive), after the cursor and around: what `/`
    /// does on a server without `GET /search`.
    func jump(to text: String) async {
        do throws(MenuClientError) {
            let update = try await source.reveal(text)
            follow(update)
            message = ("found \(text)", false)
            return
        } catch  where error.code == "unknown_node" || error.code == "not_found" {
            // Not an id (not_found: text with a "/" is no node path at all): match titles below.
        } catch {
            message = (error.description, true)
            return
        }
        let needle = text.lowercased()
        let rows =
            source.count <= Self.titleScanLimit
            ? source.cachedRows
            : viewport.visible.map { source.row(at: $0) }
        let base = source.count <= Self.titleScanLimit ? 0 : viewport.top
        let start = viewport.cursor - base + 1
        for step in 0 ..< rows.count {
            let position = (start + step) % rows.count
            guard let row = rows[position] else { continue }
            let english = row.attributes?["en"]?.stringValue?.lowercased() ?? ""
            if row.title.lowercased().contains(needle) || english.contains(needle) {
                viewport.go(to: base + position)
                message = ("found \"\(text)\": \(describe(row))", false)
                return
            }
        }
        message = ("no id or fetched title matches \"\(text)\"", true)
    }

    private enum Write {
        case toggle(String)
        case reveal(String)
        case setAll(MenuExpansionMode)
        case select(String, Bool)
    }

    /// Runs one write, follows its splices, and reports `done` or the error.
    private func write(_ write: Write, done: String?) async {
        do throws(MenuClientError) {
            switch write {
            case .toggle(let id): follow(try await source.toggle(id))
            case .reveal(let id): follow(try await source.reveal(id))
            case .setAll(let mode): follow(try await source.setAll(mode))
            case .select(let id, let selected): follow(try await source.setSelected(id, selected))
            }
            if let done { message = (done, false) }
        } catch {
            message = (error.description, true)
        }
    }

    /// Applies a write's events; then the cursor to the node it named (the window moves only when it is out of view).
    func follow(_ update: MenuTableUpdate) {
        for event in update.events { handle(event) }
        if let index = update.index { viewport.go(to: index) }
    }

    // MARK: Table events

    /// Applies one table event. False when the screen must not be painted for it: a page load
    /// that failed again with the error already shown (painting asks for the missing rows again,
    /// so a server that is down would be asked in a loop; the next key tries again).
    @discardableResult
    public func handle(_ event: MenuTableEvent) -> Bool {
        switch event {
        case .changed(let change): viewport.apply(change.splice, count: change.count)
        case .reloaded(_, let count, let reason):
            viewport.reset(count: count)
            switch reason {
            case .menuChanged: message = ("the server serves a new menu: its rows are read again", false)
            case .historyGone:
                message = ("the session changed too much elsewhere to follow: its rows are read again", false)
            case .sessionRecreated, .requested: break
            }
        case .rowsLoaded: break
        case .sessionRecreated(let recreation):
            message = (
                "the server had lost the session; a new one \(recreation.layoutRestored ? "with the same groups open" : "from the menu's defaults")",
                true
            )
        case .loadFailed(let error):
            if message?.text == error.description { return false }
            message = (error.description, true)
        }
        return true
    }

    // MARK: Drawing

    public func frame() -> Frame {
        let formatter = RowFormatter(width: width, rowCount: viewport.count)
        var lines = [headerLine()]
        let list = search?.lines(width: width, height: viewport.height) ?? []
        let treeHeight = viewport.height - list.count
        for line in 0 ..< treeHeight {
            let index = viewport.top + line
            guard index < viewport.count else {
                lines.append(ScreenLine([Span(String(repeating: " ", count: width))]))
                continue
            }
            let row = source.row(at: index)
            var drawn = formatter.line(for: row, at: index, isCursor: index == viewport.cursor)
            drawn.identity = row?.id
            lines.append(drawn)
        }
        lines += list
        lines.append(statusLine())
        return Frame(lines: lines, scrolling: 1 ..< 1 + treeHeight)
    }

    /// ` menu-client  <title>  Drinks › Beer`: the groups enclosing the top row (when they are
    /// cached), the counts on the right.
    private func headerLine() -> ScreenLine {
        let counts = "\(viewport.count) rows, \(source.leafCount) dishes shown"
        var left = [Span(" menu-client  " + title, .reversedBold)]
        if let path = path(ofRowAt: viewport.top), !path.isEmpty {
            left.append(Span("  " + path.joined(separator: " › "), .reversed))
        }
        return RowFormatter.assemble(left, right: [Span(counts + " ", .reversed)], width: width, filler: .reversed)
    }

    /// How far above a row ``path(ofRowAt:)`` looks for its groups among the cached rows.
    static let pathScanLimit = 2_000

    /// The titles of the groups enclosing the row at `index`, the top-level one first: each the
    /// nearest cached row above with the id its child names as `parentId`. Nil when one of them
    /// is not cached within ``pathScanLimit`` rows (a sticky header that guessed would mislead).
    func path(ofRowAt index: Int) -> [String]? {
        guard var wanted = source.cachedRow(at: index)?.parentId else { return [] }
        var titles: [String] = []
        var position = index - 1
        while position >= 0, index - position <= Self.pathScanLimit {
            if let row = source.cachedRow(at: position), row.id == wanted {
                titles.insert(row.title, at: 0)
                guard let next = row.parentId else { return titles }
                wanted = next
            }
            position -= 1
        }
        return nil
    }

    private func statusLine() -> ScreenLine {
        let position = viewport.count == 0 ? "empty" : "row \(viewport.cursor + 1)/\(viewport.count)"
        switch typing {
        case .rowNumber(let digits):
            return RowFormatter.assemble(
                [Span("go to row: " + digits + "▏", .bold)], right: [Span(position)], width: width, filler: .plain)
        case .search:
            return (search ?? SearchPanel()).statusLine(width: width)
        case .none:
            let help = "↑↓ PgUp PgDn Enter 1-9 / e c q"
            let left = message.map { [Span($0.text, $0.isError ? .error : .plain)] } ?? [Span(help, .dim)]
            return RowFormatter.assemble(left, right: [Span("  " + position)], width: width, filler: .plain)
        }
    }

    private func describe(_ row: MenuRow) -> String {
        var parts = [row.title]
        if let english = row.attributes?["en"]?.stringValue, english != row.title { parts.append(english) }
        if let price = RowFormatter.price(row.attributes) { parts.append(price) }
        let marks = RowFormatter.marks(row.attributes)
        if !marks.isEmpty { parts.append(marks) }
        return parts.joined(separator: "  ")
    }
}
