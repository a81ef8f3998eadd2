/// Brings the terminal from the frame it shows to the next one, writing only what differs: when
/// the rows moved (a group collapsed above the cursor, a scroll by a line), the moved block is
/// shifted by the terminal (a scrolling region and `CSI M` / `CSI L`); then each line that still
/// differs is written again, and nothing else.
///
/// Invariant: ``shown`` is what the terminal displays (as far as this painter wrote it); nil after
/// ``invalidate()`` (a resize, the first frame), when the next paint clears and writes every line.
/// Cost: O(lines × width) per paint.
public struct FramePainter: Sendable {
    public private(set) var shown: [ScreenLine]?
    /// The lines the last ``paint(_:)`` wrote (a line shifted by the terminal is not counted).
    public private(set) var linesWritten = 0
    /// The shift the last paint had the terminal do: lines moved (negative: up), 0 for none.
    public private(set) var lastShift = 0

    public init() {}

    /// Forgets what the terminal shows: the next paint redraws everything.
    public mutating func invalidate() { shown = nil }

    /// The bytes that turn the screen into `frame`.
    public mutating func paint(_ frame: Frame) -> String {
        var output = ""
        linesWritten = 0
        lastShift = 0
        var current: [ScreenLine]
        if let shown, shown.count == frame.lines.count {
            current = shown
            output += shift(&current, toward: frame)
        } else {
            output += ANSI.reset + ANSI.clearScreen
            current = Array(repeating: ScreenLine([]), count: frame.lines.count)
        }
        for (number, line) in frame.lines.enumerated() where current[number] != line {
            // Cleared first, not after: with auto-wrap off the cursor stays on the last column once a
            // full line is written there, and a clear then would erase that column.
            output += ANSI.moveTo(line: number) + ANSI.clearToEndOfLine
            for span in line.spans {
                output +=
                    span.style == .plain
                    ? span.text.string : span.style.selectGraphicRendition + span.text.string + ANSI.reset
            }
            current[number] = line
            linesWritten += 1
        }
        shown = current
        return output
    }

    /// Moves the block of rows that moved the most lines alike (by row id) where the new frame
    /// has them, in `lines` and on the terminal; returns the escapes ("" when nothing moved).
    private mutating func shift(_ lines: inout [ScreenLine], toward frame: Frame) -> String {
        let region = frame.scrolling
        guard region.count > 1 else { return "" }
        var oldPosition: [String: Int] = [:]
        for number in region { if let identity = lines[number].identity { oldPosition[identity] = number } }
        var moves: [Int: (count: Int, top: Int)] = [:]
        for number in region {
            guard let identity = frame.lines[number].identity, let old = oldPosition[identity], old != number else {
                continue
            }
            let delta = number - old
            let top = min(old, number)
            moves[delta] = (moves[delta, default: (0, top)].count + 1, min(moves[delta]?.top ?? top, top))
        }
        guard let (delta, move) = moves.max(by: { ($0.value.count, -abs($0.key)) < ($1.value.count, -abs($1.key)) }),
            move.count >= 2, abs(delta) < region.upperBound - move.top
        else { return "" }
        let moved = move.top ..< region.upperBound
        let blank = repeatElement(ScreenLine([]), count: abs(delta))
        if delta < 0 {
            lines.replaceSubrange(moved, with: Array(lines[(moved.lowerBound - delta) ..< moved.upperBound]) + blank)
        } else {
            lines.replaceSubrange(moved, with: Array(blank) + lines[moved.lowerBound ..< (moved.upperBound - delta)])
        }
        lastShift = delta
        return ANSI.scrollRegion(moved) + ANSI.moveTo(line: moved.lowerBound)
            + (delta < 0 ? ANSI.deleteLines(-delta) : ANSI.insertLines(delta)) + ANSI.resetScrollRegion
    }
}
