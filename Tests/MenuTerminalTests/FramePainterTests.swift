// The painter writes only what changed, and what it writes turns the screen into the frame: checked
// by playing its output on a small terminal model (cursor moves, erase, scrolling region,
// insert/delete lines) against a full redraw, over random splices and scrolls.

import MenuTerminal
import NaiveReference
import Testing

extension TerminalTests {
    @Suite("Frame painting")
    struct FramePainterTests {
        static let width = 24

        /// A frame of a header, `rows` (ids shown as their lines) in the scrolling part, a status line.
        static func frame(rows: [String], height: Int, status: String = "status") -> Frame {
            var lines = [ScreenLine([Span(DisplayWidth.fitted("header", to: width), .reversed)])]
            for line in 0 ..< height {
                if line < rows.count {
                    lines.append(
                        ScreenLine([Span(DisplayWidth.fitted("row \(rows[line]) 宮保", to: width))], identity: rows[line])
                    )
                } else {
                    lines.append(ScreenLine([Span(String(repeating: " ", count: width))]))
                }
            }
            lines.append(ScreenLine([Span(DisplayWidth.fitted(status, to: width))]))
            return Frame(lines: lines, scrolling: 1 ..< 1 + height)
        }

        @Test func theFirstPaintWritesEveryLineAndAnUnchangedFrameWritesNothing() {
            var painter = FramePainter()
            var screen = TerminalModel(width: Self.width, height: 12)
            let frame = Self.frame(rows: (0 ..< 10).map(String.init), height: 10)
            screen.play(painter.paint(frame))
            #expect(painter.linesWritten == 12)
            #expect(screen.lines == frame.lines.map(\.description))
            #expect(painter.paint(frame) == "")
            #expect(painter.linesWritten == 0)
        }

        @Test func aCollapseInTheWindowShiftsTheRowsBelowAndWritesOnlyTheGroupAndTheRowsBroughtIn() {
            var painter = FramePainter()
            var screen = TerminalModel(width: Self.width, height: 12)
            let rows = (0 ..< 40).map(String.init)
            screen.play(painter.paint(Self.frame(rows: Array(rows[0 ..< 10]), height: 10)))
            // Row 2 is a group whose 3 rows (3, 4, 5) go; 10, 11, 12 come in at the bottom; its line changes too.
            var after = Array((rows[0 ..< 3] + rows[6 ..< 13]))
            after[2] = "2▸"
            var next = Self.frame(rows: after, height: 10)
            next.lines[3].identity = "2"
            let output = painter.paint(next)
            screen.play(output)
            #expect(screen.lines == next.lines.map(\.description))
            #expect(painter.lastShift == -3)
            #expect(painter.linesWritten == 4)  // the group's line and the three brought in
            #expect(output.contains("\u{1B}[3M"))
        }

        @Test func scrollingByOneLineWritesOneLine() {
            var painter = FramePainter()
            var screen = TerminalModel(width: Self.width, height: 12)
            let rows = (0 ..< 40).map(String.init)
            screen.play(painter.paint(Self.frame(rows: Array(rows[0 ..< 10]), height: 10)))
            let down = Self.frame(rows: Array(rows[1 ..< 11]), height: 10)
            screen.play(painter.paint(down))
            #expect(screen.lines == down.lines.map(\.description))
            #expect((painter.lastShift, painter.linesWritten) == (-1, 1))
            let up = Self.frame(rows: Array(rows[0 ..< 10]), height: 10)
            screen.play(painter.paint(up))
            #expect(screen.lines == up.lines.map(\.description))
            #expect((painter.lastShift, painter.linesWritten) == (1, 1))
        }

        @Test func aNewPageRewritesTheRowsWithoutAShift() {
            var painter = FramePainter()
            let rows = (0 ..< 40).map(String.init)
            _ = painter.paint(Self.frame(rows: Array(rows[0 ..< 10]), height: 10))
            _ = painter.paint(Self.frame(rows: Array(rows[10 ..< 20]), height: 10))
            #expect((painter.lastShift, painter.linesWritten) == (0, 10))
        }

        @Test func invalidatingRedrawsEverything() {
            var painter = FramePainter()
            let frame = Self.frame(rows: ["a", "b"], height: 4)
            _ = painter.paint(frame)
            painter.invalidate()
            #expect(painter.paint(frame).contains("\u{1B}[2J"))
            #expect(painter.linesWritten == 6)
        }

        @Test(arguments: [1, 2, 3, 4, 5])
        func randomSplicesAndScrollsLeaveTheScreenAsAFullRedrawWould(seed: UInt64) {
            var random = SplitMix64(state: seed)
            var table = (0 ..< 60).map { "r\($0)" }
            var painter = FramePainter()
            var screen = TerminalModel(width: Self.width, height: 14)
            var top = 0
            var status = 0
            for _ in 0 ..< 200 {
                switch random.next() % 4 {
                case 0:  // a collapse: a block goes
                    let at = Int(random.next() % UInt64(table.count))
                    let removed = min(table.count - at, Int(random.next() % 15))
                    table.removeSubrange(at ..< at + removed)
                case 1:  // an expansion: a block comes
                    let at = Int(random.next() % UInt64(table.count + 1))
                    let inserted = Int(random.next() % 15)
                    status += 1
                    table.insert(contentsOf: (0 ..< inserted).map { "n\(status)-\($0)" }, at: at)
                case 2: top += Int(random.next() % 7) - 3  // a scroll
                default: status += 1  // only the status line
                }
                if table.count < 20 { table += (0 ..< 30).map { "m\(status)-\($0)" } }
                top = min(max(0, top), max(0, table.count - 12))
                let frame = Self.frame(
                    rows: Array(table[top ..< min(table.count, top + 12)]), height: 12, status: "status \(status)")
                screen.play(painter.paint(frame))
                #expect(screen.lines == frame.lines.map(\.description))
            }
        }
    }
}

/// The part of a VT100/xterm screen the painter uses, with auto-wrap off: cursor position (CUP),
/// erase in line and display (EL, ED 2), scrolling region (DECSTBM), delete and insert lines (DL,
/// IL), text (a wide character takes two cells); SGR and modes are ignored.
struct TerminalModel {
    let width: Int
    var cells: [[String]]
    var line = 0
    var column = 0
    var region: Range<Int>

    init(width: Int, height: Int) {
        self.width = width
        cells = Array(repeating: Array(repeating: " ", count: width), count: height)
        region = 0 ..< height
    }

    var lines: [String] { cells.map { $0.joined() } }

    private var blankLine: [String] { Array(repeating: " ", count: width) }

    mutating func play(_ output: String) {
        var characters = Array(output)[...]
        while let character = characters.popFirst() {
            guard character == "\u{1B}" else {
                put(character)
                continue
            }
            guard characters.popFirst() == "[" else { continue }
            var parameters = ""
            while let next = characters.popFirst() {
                if next.isLetter || next == "@" || next == "~" {
                    perform(next, parameters)
                    break
                }
                parameters.append(next)
            }
        }
    }

    private mutating func put(_ character: Character) {
        let columns = DisplayWidth.of(character)
        guard columns > 0 else { return }
        guard column + columns <= width else { return }
        cells[line][column] = String(character)
        if columns == 2 { cells[line][column + 1] = "" }
        column = min(width - 1, column + columns)
    }

    private mutating func perform(_ command: Character, _ parameters: String) {
        guard !parameters.hasPrefix("?") else { return }
        let numbers = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
        func number(_ index: Int, _ fallback: Int) -> Int {
            index < numbers.count ? numbers[index] ?? fallback : fallback
        }
        switch command {
        case "H": (line, column) = (number(0, 1) - 1, number(1, 1) - 1)
        case "K": for index in column ..< width { cells[line][index] = " " }
        case "J": cells = Array(repeating: blankLine, count: cells.count)
        case "r":
            region = parameters.isEmpty ? 0 ..< cells.count : (number(0, 1) - 1) ..< number(1, cells.count)
            (line, column) = (0, 0)
        case "M", "L":
            guard region.contains(line) else { return }
            let count = min(number(0, 1), region.upperBound - line)
            var block = Array(cells[line ..< region.upperBound])
            if command == "M" {
                block = Array(block.dropFirst(count)) + Array(repeating: blankLine, count: count)
            } else {
                block = Array(repeating: blankLine, count: count) + Array(block.dropLast(count))
            }
            cells.replaceSubrange(line ..< region.upperBound, with: block)
        default: break
        }
    }
}
