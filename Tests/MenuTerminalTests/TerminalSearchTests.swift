// menu-client's search line in tmux against the built menu-server (GET /search): typed text lists
// the server's matches as paths, Enter reveals the chosen one with the cursor on it, Escape leaves
// the tree as it was. And the panel's own rule: an answer for an older text is never shown.

import Foundation
import MenuAppTestSupport
import MenuClient
import MenuTerminal
import MenuTestSupport
import Testing

extension TerminalTests {
    @Suite("Live: menu-client search in tmux")
    struct TerminalSearchTests {
        static func status(_ screen: [String]) -> String { TerminalLiveTests.status(screen) }

        @Test
        func typedTextListsTheServersMatchesAndEnterRevealsTheChosenOneUnderTheCursor() throws {
            let (pane, _, _) = try TerminalLiveTests.sichuanClient()
            try pane.send("1", "7", "Enter", "Enter")  // row 17 is 酒水: closed, its 13 rows hidden
            let closed = try pane.waitForScreen("酒水 closed") { Self.status($0).hasPrefix("closed 酒水") }
            #expect(closed[0].hasSuffix(" 17 rows, 14 dishes shown"))

            try pane.send("/")
            try pane.waitForScreen("the search line") { Self.status($0).hasPrefix("search: ▏") }
            try pane.send("啤酒", literal: true)
            var screen = try pane.waitForScreen("the matches for 啤酒") { Self.status($0).hasSuffix("4 matches") }
            #expect(Self.status(screen).hasPrefix("search: 啤酒▏"))
            // The list at the bottom of the window, in menu order, each as its path; all hidden in 酒水.
            let list = Array(screen[24 ... 28])
            #expect(list[0] == String(repeating: "─", count: 100))
            #expect(list[1].hasPrefix(" ▸ 酒水 › 啤酒 ") && list[1].hasSuffix(" hidden"))
            #expect(list[2].hasPrefix("   酒水 › 啤酒 › 雪花啤酒 "))
            #expect(list[3].hasPrefix("   酒水 › 啤酒 › 青島啤酒 "))
            #expect(list[4].hasPrefix("   酒水 › 啤酒 › 重慶啤酒 ") && list[4].hasSuffix(" hidden"))
            #expect(screen[1] == closed[1] && screen[17] == closed[17])  // the tree above it as it was

            try pane.send("Down", "Down")
            screen = try pane.waitForScreen("青島啤酒 chosen") { $0.count > 27 && $0[27].hasPrefix(" ▸ 酒水 › 啤酒 › 青島啤酒") }
            #expect(screen[25].hasPrefix("   酒水 › 啤酒 "))
            try pane.send("Enter")
            screen = try pane.waitForScreen("青島啤酒 revealed") {
                Self.status($0).hasPrefix("found 酒水 › 啤酒 › 青島啤酒") && TerminalLiveTests.fetched($0, 1 ... 28)
            }
            #expect(screen[0].hasSuffix(" 30 rows, 24 dishes shown"))  // 酒水 open again
            #expect(screen[20].hasPrefix("20       青島啤酒  Tsingtao Beer"))
            #expect(Self.status(screen).hasSuffix("row 20/30"))  // the cursor on it
            #expect(!screen.contains { $0.hasPrefix("───") })
        }

        @Test
        func escapeLeavesTheSearchWithTheTreeAsItWasAndANodeIdStillJumps() throws {
            let (pane, _, _) = try TerminalLiveTests.sichuanClient()
            try pane.send("5", "Enter")
            let before = try pane.waitForScreen("row 5") { Self.status($0).hasSuffix("row 5/30") }
            try pane.send("/")
            try pane.send("豆腐", literal: true)
            let listed = try pane.waitForScreen("the matches for 豆腐") { Self.status($0).hasSuffix("2 matches") }
            #expect(listed[26] == String(repeating: "─", count: 100))
            #expect(listed[27].hasPrefix(" ▸ 主菜 › 麻婆豆腐 ") && listed[27].hasSuffix(" row 5"))
            #expect(listed[28].hasPrefix("   主菜 › 家常豆腐 ") && listed[28].hasSuffix(" row 6"))
            try pane.send("Escape")
            let after = try pane.waitForScreen("the tree back") { !Self.status($0).hasPrefix("search:") }
            #expect(after == before)

            try pane.send("/")
            try pane.send("no such dish", literal: true)
            try pane.waitForScreen("no match") { Self.status($0).hasSuffix("no match") }
            try pane.send("Enter")
            try pane.waitForScreen("nothing matches") { Self.status($0).hasPrefix("nothing matches \"no such dish\"") }
            // Text that matches no title but is a node id: revealed by id, as before search.
            try pane.send("/")
            try pane.send("snow-beer", literal: true)
            try pane.send("Enter")
            let screen = try pane.waitForScreen("snow-beer revealed") { Self.status($0).hasPrefix("found snow-beer") }
            #expect(Self.status(screen).hasSuffix("row 19/30"))
        }

        /// The shipped menu has titles in zh-Hant, zh-Hans and en: with `--lang en` the matches of an
        /// English query are English paths, and revealing one (a write, its If-Match in that locale) works.
        @Test
        func onTheLocalizedMenuAnEnglishClientFindsAndRevealsInEnglish() throws {
            let server = try LiveChildServer(arguments: [
                "--port", "0", "--config", LivePaths.packageRoot.appendingPathComponent("Config/menu.json").path
            ])
            let command =
                TerminalLiveTests.quoted(try TerminalTestPaths.menuClient().path)
                + " --lang en http://127.0.0.1:\(server.port)"
            let pane = try TmuxPane(command: command, keeping: [server])
            try pane.waitForScreen("the first screen in English") { $0.count > 2 && $0[1] == " 1 ▾ Main Courses (9)" }
            try pane.send("c")
            try pane.waitForScreen("every group collapsed") { Self.status($0).hasPrefix("every group collapsed") }
            try pane.send("/")
            try pane.send("tofu", literal: true)
            let listed = try pane.waitForScreen("the matches for tofu") { Self.status($0).hasSuffix("2 matches") }
            #expect(listed[27].hasPrefix(" ▸ Main Courses › Mapo Tofu ") && listed[27].hasSuffix(" hidden"))
            #expect(listed[28].hasPrefix("   Main Courses › Home-Style Tofu "))
            try pane.send("Down", "Enter")
            // The rows the reveal brought in arrive a page load after the status line.
            let screen = try pane.waitForScreen("Home-Style Tofu revealed") {
                Self.status($0).hasPrefix("found Main Courses › Home-Style Tofu")
                    && TerminalLiveTests.fetched($0, 1 ... 12)
            }
            #expect(Self.status(screen).hasSuffix("row 6/12") && screen[6].hasPrefix(" 6     Home-Style Tofu "))
        }

        private static func page(_ ids: [String], total: Int? = nil) -> MenuSearchPage {
            let matches = ids.map { MenuSearchMatch(id: $0, title: $0, isGroup: false, index: nil, path: []) }
            return MenuSearchPage(
                version: "v", revision: 0, query: "", total: total ?? ids.count, offset: 0, limit: 50, matches: matches)
        }

        @Test func anAnswerForAnOlderTextIsDroppedAndTheSelectionStaysInTheMatches() {
            var panel = SearchPanel()
            panel.edit("啤")
            let older = panel.generation
            panel.edit("啤酒")
            let stale = panel.accept(
                SearchResult(generation: older, outcome: .success(Self.page(["beer", "snow-beer", "tsingtao"]))))
            #expect(!stale)
            #expect(panel.matches.isEmpty && !panel.isCurrent)
            let current = panel.accept(
                SearchResult(generation: panel.generation, outcome: .success(Self.page(["beer", "snow-beer"]))))
            #expect(current)
            #expect(panel.isCurrent && panel.matches.map(\.id) == ["beer", "snow-beer"])
            panel.move(by: 5)
            #expect(panel.selectedMatch?.id == "snow-beer")
            panel.move(by: -9)
            #expect(panel.selectedMatch?.id == "beer")
            // A failure is shown with the matches of before; emptied, the panel answers nothing.
            panel.edit("啤酒x")
            let failed = panel.accept(SearchResult(generation: panel.generation, outcome: .failure(.transport("down"))))
            #expect(failed)
            #expect(panel.problem == .transport("down") && panel.matches.count == 2)
            panel.edit("")
            #expect(panel.matches.isEmpty && panel.selectedMatch == nil)
            let emptied = panel.accept(
                SearchResult(generation: panel.generation, outcome: .success(Self.page(["beer"]))))
            #expect(!emptied)
        }
    }
}
