import MenuClient

/// The window of rows the screen shows over the table, and the cursor in it.
///
/// Invariant: when `count` > 0, `0 <= cursor < count` and `top <= cursor < top + height`, and
/// `top <= max(0, count - height)` (no blank lines under the last row while rows are above the
/// window); when `count` is 0, `cursor` and `top` are 0. Every method restores it. Cost: O(1).
public struct Viewport: Sendable, Hashable {
    public private(set) var count: Int
    public private(set) var height: Int
    public private(set) var top = 0
    public private(set) var cursor = 0

    public init(count: Int, height: Int) {
        self.count = max(0, count)
        self.height = max(1, height)
    }

    /// The table positions on screen, top to bottom (fewer than `height` when the table is short).
    public var visible: Range<Int> { top ..< min(count, top + height) }

    public mutating func move(by lines: Int) { place(cursor: cursor + lines) }
    public mutating func pageDown() { scroll(cursorTo: cursor + height, topTo: top + height) }
    public mutating func pageUp() { scroll(cursorTo: cursor - height, topTo: top - height) }
    public mutating func home() { place(cursor: 0) }
    public mutating func end() { place(cursor: count - 1) }

    /// The cursor to `index`, the window moved as little as it takes to show it; when it must
    /// move, `index` comes to the middle (a jump shows what surrounds the target).
    public mutating func go(to index: Int) {
        let target = min(max(0, index), max(0, count - 1))
        if !visible.contains(target) { top = target - height / 2 }
        place(cursor: target)
    }

    public mutating func resize(height: Int) {
        self.height = max(1, height)
        place(cursor: cursor)
    }

    /// Follows the table through `splice` (to `count` rows): rows after the removed block move by
    /// `inserted - removed`; a cursor inside the removed block goes to the row before it (the
    /// group that collapsed); the top row stays the same row while it is not removed.
    public mutating func apply(_ splice: MenuSplice, count newCount: Int) {
        func moved(_ position: Int) -> Int {
            if position < splice.at { return position }
            if position < splice.at + splice.removed { return max(0, splice.at - 1) }
            return position + splice.inserted - splice.removed
        }
        cursor = moved(cursor)
        // A top row inside the removed block: the first row after the block takes its place.
        top = top < splice.at ? top : top < splice.at + splice.removed ? splice.at : moved(top)
        count = max(0, newCount)
        place(cursor: cursor)
    }

    /// Every row dropped (a reload): the same cursor position, clamped to `count`.
    public mutating func reset(count newCount: Int) {
        count = max(0, newCount)
        place(cursor: cursor)
    }

    private mutating func scroll(cursorTo newCursor: Int, topTo newTop: Int) {
        top = newTop
        place(cursor: newCursor)
    }

    /// Sets the cursor (clamped) and brings the window to it and inside the table.
    private mutating func place(cursor newCursor: Int) {
        guard count > 0 else {
            (top, cursor) = (0, 0)
            return
        }
        cursor = min(max(0, newCursor), count - 1)
        if cursor < top { top = cursor }
        if cursor >= top + height { top = cursor - height + 1 }
        top = min(max(0, top), max(0, count - height))
    }
}
