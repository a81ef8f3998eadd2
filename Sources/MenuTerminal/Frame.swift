/// How a run of text is drawn.
public enum TextStyle: Sendable, Hashable {
    case plain, bold, dim, reversed, reversedBold, error

    /// The SGR escape that sets this style from the default one.
    var selectGraphicRendition: String {
        switch self {
        case .plain: ""
        case .bold: ANSI.csi + "1m"
        case .dim: ANSI.csi + "2m"
        case .reversed: ANSI.csi + "7m"
        case .reversedBold: ANSI.csi + "1;7m"
        case .error: ANSI.csi + "1;31m"
        }
    }
}

/// A run of text in one style: the only text the screen shows (``FramePainter`` writes spans and
/// its own escapes, nothing else), so whatever a span is made of is sanitized (``TerminalText``).
public struct Span: Sendable, Hashable {
    public let text: TerminalText
    public var style: TextStyle
    public init(_ text: TerminalText, _ style: TextStyle = .plain) {
        self.text = text
        self.style = style
    }

    /// `text` sanitized: a server's title or message, the line typed, the app's own words alike.
    public init(_ text: some StringProtocol, _ style: TextStyle = .plain) {
        self.init(TerminalText(text), style)
    }
}

/// One line of the screen: its spans, exactly the screen's width in columns (``DisplayWidth``),
/// and what it shows (a row id) so that a line moved by a splice or a scroll is recognised and
/// moved by the terminal instead of being written again. Two lines are equal when they look the same.
public struct ScreenLine: Sendable, Equatable, CustomStringConvertible {
    public var spans: [Span]
    /// The row id the line shows; nil for lines that show no row (header, status, placeholders).
    public var identity: String?

    public init(_ spans: [Span], identity: String? = nil) {
        self.spans = spans
        self.identity = identity
    }

    public static func == (left: ScreenLine, right: ScreenLine) -> Bool { left.spans == right.spans }

    /// The text as a terminal shows it, without styles.
    public var description: String { spans.map(\.text.string).joined() }
}

/// What the screen should show: every line, top to bottom, and the lines that scroll (the rows).
///
/// Invariant: `lines.count` is the screen height and `scrolling` lies within it.
public struct Frame: Sendable, Equatable {
    public var lines: [ScreenLine]
    public var scrolling: Range<Int>
    public init(lines: [ScreenLine], scrolling: Range<Int>) {
        self.lines = lines
        self.scrolling = scrolling.clamped(to: 0 ..< lines.count)
    }
}

/// The escape sequences the client writes (ECMA-48 / xterm), by hand.
public enum ANSI {
    public static let csi = "\u{1B}["
    public static let enterAlternateScreen = csi + "?1049h"
    public static let leaveAlternateScreen = csi + "?1049l"
    public static let hideCursor = csi + "?25l"
    public static let showCursor = csi + "?25h"
    /// Auto-wrap off, so that a line written to the last column never scrolls the screen.
    public static let autowrapOff = csi + "?7l"
    public static let autowrapOn = csi + "?7h"
    public static let clearScreen = csi + "2J"
    public static let reset = csi + "0m"
    public static let clearToEndOfLine = csi + "K"

    /// The cursor to `line`, `column` (both from 0).
    public static func moveTo(line: Int, column: Int = 0) -> String { csi + "\(line + 1);\(column + 1)H" }
    /// Sets the scrolling region to `lines` (from 0); `CSI r` resets it to the whole screen.
    public static func scrollRegion(_ lines: Range<Int>) -> String {
        csi + "\(lines.lowerBound + 1);\(lines.upperBound)r"
    }
    public static let resetScrollRegion = csi + "r"
    /// Deletes `count` lines at the cursor, pulling the region below up (blank lines at its bottom).
    public static func deleteLines(_ count: Int) -> String { csi + "\(count)M" }
    /// Inserts `count` blank lines at the cursor, pushing the region below down.
    public static func insertLines(_ count: Int) -> String { csi + "\(count)L" }
}
