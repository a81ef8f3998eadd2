// The window over the table follows the cursor and the server's splices.

import MenuClient
import MenuTerminal
import Testing

extension TerminalTests {
    @Suite("Viewport")
    struct ViewportTests {
        @Test func theCursorStaysInTheWindowAndTheWindowInTheTable() {
            var viewport = Viewport(count: 100, height: 10)
            viewport.move(by: 12)
            #expect((viewport.cursor, viewport.top) == (12, 3))
            viewport.pageDown()
            #expect((viewport.cursor, viewport.top) == (22, 13))
            viewport.end()
            #expect((viewport.cursor, viewport.top, viewport.visible) == (99, 90, 90 ..< 100))
            viewport.pageDown()
            #expect((viewport.cursor, viewport.top) == (99, 90))
            viewport.pageUp()
            #expect((viewport.cursor, viewport.top) == (89, 80))
            viewport.home()
            #expect((viewport.cursor, viewport.top) == (0, 0))
            viewport.move(by: -1)
            #expect((viewport.cursor, viewport.top) == (0, 0))
        }

        @Test func goingToARowOutOfViewCentresIt() {
            var viewport = Viewport(count: 1000, height: 10)
            viewport.go(to: 500)
            #expect((viewport.cursor, viewport.top) == (500, 495))
            viewport.go(to: 503)
            #expect((viewport.cursor, viewport.top) == (503, 495))  // visible: the window stays
            viewport.go(to: 5000)
            #expect((viewport.cursor, viewport.top) == (999, 990))
        }

        @Test func aCollapseAboveTheWindowMovesItWithItsRows() {
            var viewport = Viewport(count: 100, height: 10)
            viewport.go(to: 50)
            let top = viewport.top
            viewport.apply(MenuSplice(at: 3, inserted: 0, removed: 9), count: 91)
            #expect((viewport.cursor, viewport.top) == (41, top - 9))
            viewport.apply(MenuSplice(at: 3, inserted: 9, removed: 0), count: 100)
            #expect((viewport.cursor, viewport.top) == (50, top))
        }

        @Test func aCursorInsideTheRemovedBlockGoesToTheGroupThatClosed() {
            var viewport = Viewport(count: 30, height: 10)
            viewport.go(to: 5)
            viewport.apply(MenuSplice(at: 1, inserted: 0, removed: 9), count: 21)
            #expect((viewport.cursor, viewport.top) == (0, 0))
        }

        @Test func aShrinkingTableLeavesNoBlankLinesUnderTheLastRow() {
            var viewport = Viewport(count: 100, height: 10)
            viewport.end()
            viewport.apply(MenuSplice(at: 1, inserted: 0, removed: 95), count: 5)
            #expect((viewport.cursor, viewport.top, viewport.visible) == (4, 0, 0 ..< 5))
            viewport.reset(count: 0)
            #expect((viewport.cursor, viewport.top, viewport.visible) == (0, 0, 0 ..< 0))
            viewport.resize(height: 3)
            #expect(viewport.height == 3)
        }
    }
}
