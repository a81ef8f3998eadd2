// menu-client as a person uses it: the built executable in a tmux pane (100 × 30) against the
// built menu-server, keys typed with send-keys, the screen read with capture-pane. Needs
// `swift build` first (tmux: scripts/test installs it).

import ChildProcess
import Foundation
import MenuAppTestSupport
import MenuTerminal
import MenuTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TerminalTests {
    @Suite("Live: menu-client in tmux")
    struct TerminalLiveTests {
        static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

        static func clientCommand(port: Int) throws -> String {
            quoted(try TerminalTestPaths.menuClient().path) + " http://127.0.0.1:\(port)"
        }

        static func status(_ screen: [String]) -> String { screen.last { !$0.isEmpty } ?? "" }

        /// No placeholder ("12 …") among `lines`: rows a splice brought in arrive a page load after the
        /// status line says what the key did.
        static func fetched(_ screen: [String], _ lines: ClosedRange<Int>) -> Bool {
            screen.count > lines.upperBound && !screen[lines].contains { $0.hasSuffix(" …") }
        }

        /// The built menu-server on the tests' Sichuan menu, and menu-client on it in a pane, once its
        /// first screen is drawn (every row of the window fetched, the last one 唯怡豆奶 at ¥7.5).
        /// The pane keeps the server: both live while the test uses the pane.
        static func sichuanClient(command: ((Int) throws -> String)? = nil) throws -> (
            pane: TmuxPane, port: Int, screen: [String]
        ) {
            let server = try LiveChildServer(arguments: ["--port", "0", "--config", LivePaths.menuConfig])
            let pane = try TmuxPane(command: try (command ?? clientCommand(port:))(server.port), keeping: [server])
            let screen = try pane.waitForScreen("the first screen") {
                Self.fetched($0, 1 ... 28) && $0[28].hasSuffix("¥7.5")
            }
            return (pane, server.port, screen)
        }

        @Test
        func theSichuanMenuShowsGroupsFlushLeftDishesIndentedAndPricesAtTheRightEdge() throws {
            let (pane, port, screen) = try Self.sichuanClient()
            // The menu's own title (GET /menu: the config's root title) beside where it is served.
            #expect(screen[0].hasPrefix(" menu-client  川菜館 · 127.0.0.1:\(port) "))
            #expect(screen[0].hasSuffix(" 30 rows, 24 dishes shown"))
            #expect(screen[1] == " 1 ▾ 主菜 (9)  Main Courses")
            #expect(screen[2].hasPrefix(" 2     宮保雞丁  Kung Pao Chicken"))
            #expect(screen[2].hasSuffix("辣辣             ¥38"))
            #expect(screen[11] == "11 ▾ 早餐 (5)  Breakfast")
            #expect(screen[19].hasPrefix("19       雪花啤酒  Snow Beer"))
            #expect(screen[19].hasSuffix("500ml       ¥8"))
            // tmux lays out the double-width titles itself: a price ends in the last column only when
            // the client measured every title as tmux does.
            let dishLines = screen[1 ..< 29].filter { $0.contains("¥") }
            #expect(dishLines.count == 22)  // rows 1 to 28: 6 groups, 22 dishes
            for line in dishLines { #expect(DisplayWidth.of(line) == 100, "\(line)") }
            #expect(Self.status(screen).hasSuffix("row 1/30"))

            // docs/menu-client.txt is this screen (docs/clients.md shows it), with the default port.
            let documented = try String(
                contentsOf: LivePaths.packageRoot.appendingPathComponent("docs/menu-client.txt"), encoding: .utf8)
            let shown = screen.joined(separator: "\n").replacingOccurrences(
                of: "127.0.0.1:\(port) ", with: "127.0.0.1:8080" + String(repeating: " ", count: String(port).count - 3)
            )
            #expect(documented.trimmingCharacters(in: .newlines) == shown.trimmingCharacters(in: .newlines))

            // Scrolled to the end, the top row is inside Main Courses: the header names the group.
            try pane.send("G")
            let end = try pane.waitForScreen("the last row") { Self.status($0).hasSuffix("row 30/30") }
            #expect(end[0].hasPrefix(" menu-client  川菜館 · 127.0.0.1:\(port)  主菜 "), "\(end[0])")
        }

        @Test
        func spaceChoosesTheRowUnderTheCursorAndAGroupChoosesEveryLeafUnderIt() throws {
            let (pane, _, _) = try Self.sichuanClient()
            // Row 18 is 啤酒 (Beer): chosen whole, its three beers show ✓ and 酒水 shows 3 of 10.
            try pane.send("1", "8", "Enter", "Space")
            // The rows a choice changes are fetched again after its message: wait for them too.
            var screen = try pane.waitForScreen("啤酒 chosen, its rows fetched again") {
                Self.status($0).hasPrefix("chose 啤酒") && Self.fetched($0, 17 ... 19)
            }
            #expect(screen[18].hasPrefix("18   ▾ 啤酒 (3) ✓  Beer"), "\(screen[18])")
            #expect(screen[17].hasPrefix("17 ▾ 酒水 (3) 3/10 ✓  Drinks"), "\(screen[17])")
            #expect(screen[19].hasPrefix("19     ✓ 雪花啤酒  Snow Beer"), "\(screen[19])")
            #expect(screen[22].hasPrefix("22   ▾ 白酒 (3)  Baijiu"), "\(screen[22])")
            // Down to 雪花啤酒 and Space again: cleared, and the group shows 2 of 3.
            try pane.send("Down", "Space")
            screen = try pane.waitForScreen("雪花啤酒 cleared, its rows fetched again") {
                Self.status($0).hasPrefix("cleared 雪花啤酒") && Self.fetched($0, 18 ... 19)
            }
            #expect(screen[19].hasPrefix("19       雪花啤酒  Snow Beer"), "\(screen[19])")
            #expect(screen[18].hasPrefix("18   ▾ 啤酒 (3) 2/3 ✓  Beer"), "\(screen[18])")
        }

        @Test
        func enterClosesTheGroupUnderTheCursorDigitsGoToARowAndSlashFindsByIdOrName() throws {
            let (pane, _, _) = try Self.sichuanClient()

            try pane.send("Enter")
            // The status line is written last: once it shows the message, the rows above it are drawn.
            var screen = try pane.waitForScreen("主菜 closed") { Self.status($0).hasPrefix("closed 主菜") }
            #expect(screen[1] == " 1 ▸ 主菜 (9)  Main Courses")
            #expect(screen[0].hasSuffix("21 rows, 15 dishes shown"))
            #expect(screen[2] == " 2 ▾ 早餐 (5)  Breakfast")
            #expect(screen[3].hasPrefix(" 3     擔擔面  Dan Dan Noodles"))

            try pane.send("Down", "Enter")
            screen = try pane.waitForScreen("早餐 closed, the rows below moved up") {
                Self.status($0).hasPrefix("closed 早餐")
            }
            #expect(screen[2] == " 2 ▸ 早餐 (5)  Breakfast")
            #expect(screen[3] == " 3 ▾ 酒水 (3)  Drinks")
            #expect(screen[4] == " 4   ▾ 啤酒 (3)  Beer")
            #expect(screen[16].hasPrefix("16       竹葉青茶"))
            #expect(screen[17 ..< 29].allSatisfy { $0.isEmpty })
            #expect(Self.status(screen).hasPrefix("closed 早餐"))
            #expect(Self.status(screen).hasSuffix("row 2/16"))

            try pane.send("1", "3")
            try pane.waitForScreen("the row number typed") { Self.status($0).hasPrefix("go to row: 13▏") }
            try pane.send("Enter")
            try pane.waitForScreen("row 13") { Self.status($0).hasSuffix("row 13/16") }
            try pane.send("Enter")  // on a dish: what it is
            try pane.waitForScreen("the dish described") { Self.status($0).hasPrefix("王老吉  Wanglaoji Herbal Tea  ¥6") }
            try pane.send("Left")  // on a dish: to its group
            try pane.waitForScreen("飲料 under the cursor") { Self.status($0).hasSuffix("row 12/16") }
            try pane.send("Left")  // on an open group: closes it
            screen = try pane.waitForScreen("飲料 closed") { Self.status($0).hasPrefix("closed 飲料") }
            #expect(screen[12] == "12   ▸ 飲料 (4)  Soft Drinks")
            #expect(screen[0].hasSuffix(" 12 rows, 6 dishes shown"))
            try pane.send("Right")
            screen = try pane.waitForScreen("飲料 open") {
                Self.status($0).hasPrefix("opened 飲料") && Self.fetched($0, 1 ... 16)
            }
            #expect(screen[13].hasPrefix("13       王老吉"))
            try pane.send("9", "9", "Enter")
            try pane.waitForScreen("no row 99") { Self.status($0).hasPrefix("no row 99: rows are 1 to 16") }

            try pane.send("3", "Enter", "Enter")
            screen = try pane.waitForScreen("酒水 closed") { Self.status($0).hasPrefix("closed 酒水") }
            #expect(screen[3] == "3 ▸ 酒水 (3)  Drinks")  // 3 rows: a one-digit gutter
            #expect(screen[0].hasSuffix(" 3 rows, 0 dishes shown"))
            try pane.send("/")
            try pane.send("snow-beer", literal: true)
            try pane.send("Enter")
            screen = try pane.waitForScreen("snow-beer revealed") {
                Self.status($0).hasPrefix("found snow-beer") && Self.fetched($0, 1 ... 16)
            }
            #expect(screen[3] == " 3 ▾ 酒水 (3)  Drinks")
            #expect(screen[5].hasPrefix(" 5       雪花啤酒  Snow Beer"))
            #expect(Self.status(screen).hasSuffix("row 5/16"))
            try pane.send("/")
            try pane.send("酸梅", literal: true)
            try pane.send("Enter")
            screen = try pane.waitForScreen("a title matched") { Self.status($0).hasPrefix("found 酒水 › 飲料 › 酸梅湯") }
            #expect(Self.status(screen).hasSuffix("row 15/16"))
            try pane.send("/")
            try pane.send("desserts", literal: true)
            try pane.send("Enter")
            try pane.waitForScreen("nothing matched") { Self.status($0).hasPrefix("nothing matches \"desserts\"") }
            try pane.send("/")
            try pane.send("drinks/beer", literal: true)  // no title has it, and no id has a "/"
            try pane.send("Enter")
            try pane.waitForScreen("nothing matched") { Self.status($0).hasPrefix("nothing matches \"drinks/beer\"") }
        }

        @Test
        func cCollapsesEveryGroupAndEExpandsThemAll() throws {
            let (pane, _, _) = try Self.sichuanClient()
            try pane.send("c")
            var screen = try pane.waitForScreen("every group collapsed") {
                Self.status($0).hasPrefix("every group collapsed") && Self.fetched($0, 1 ... 3)
            }
            #expect(screen[0].hasSuffix(" 3 rows, 0 dishes shown"))
            #expect(
                Array(screen[1 ... 3]) == ["1 ▸ 主菜 (9)  Main Courses", "2 ▸ 早餐 (5)  Breakfast", "3 ▸ 酒水 (3)  Drinks"])
            #expect(screen[4 ..< 29].allSatisfy { $0.isEmpty })
            try pane.send("End", "Enter")
            screen = try pane.waitForScreen("酒水 opened, its groups closed") {
                Self.status($0).hasPrefix("opened 酒水") && Self.fetched($0, 1 ... 6)
            }
            #expect(
                Array(screen[4 ... 6]) == ["4   ▸ 啤酒 (3)  Beer", "5   ▸ 白酒 (3)  Baijiu", "6   ▸ 飲料 (4)  Soft Drinks"])
            try pane.send("e")
            screen = try pane.waitForScreen("every group expanded") {
                Self.status($0).hasPrefix("every group expanded") && Self.fetched($0, 1 ... 28)
            }
            #expect(screen[0].hasSuffix(" 30 rows, 24 dishes shown"))
            #expect(screen[28].hasSuffix("¥7.5"))
        }

        /// `sh` runs the client between two `stty -g`, then reports its exit status and waits; `sh`
        /// itself ignores SIGINT so that Ctrl-C reaches only the client's handling of it.
        static func wrappedClient(port: Int, directory: URL) throws -> String {
            let before = quoted(directory.appendingPathComponent("before").path)
            let after = quoted(directory.appendingPathComponent("after").path)
            return
                "trap '' INT; stty -g > \(before); \(try clientCommand(port: port)); status=$?; stty -g > \(after); echo \"menu-client exited $status\"; exec sleep 120"
        }

        @Test(arguments: ["q", "C-c", "SIGTERM"])
        func quittingRestoresTheTerminal(by way: String) throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "menu-client-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let (pane, _, _) = try Self.sichuanClient { port in try Self.wrappedClient(port: port, directory: directory)
            }
            try #expect(pane.format("#{alternate_on} #{cursor_flag}") == "1 0")  // alternate screen, cursor hidden

            if way != "SIGTERM" {
                try pane.send(way)  // q, or Ctrl-C: SIGINT from the terminal
            } else {
                let shell = try pane.format("#{pane_pid}")
                let children = try ChildProcess.run(executable: "/usr/bin/pgrep", arguments: ["-P", shell])
                let pids = String(decoding: children.standardOutput, as: UTF8.self).split(separator: "\n").compactMap {
                    pid_t($0)
                }
                try #require(pids.count == 1)
                #expect(kill(pids[0], SIGTERM) == 0)
            }
            let screen = try pane.waitForScreen("the shell back") { $0.contains { $0.hasPrefix("menu-client exited") } }
            let status = ["q": 0, "C-c": 128 + SIGINT, "SIGTERM": 128 + SIGTERM][way]!
            #expect(screen.contains("menu-client exited \(status)"))
            #expect(!screen.joined().contains("宮保雞丁"))  // the menu was on the alternate screen only
            try #expect(pane.format("#{alternate_on} #{cursor_flag}") == "0 1")
            let before = try String(contentsOf: directory.appendingPathComponent("before"), encoding: .utf8)
            let after = try String(contentsOf: directory.appendingPathComponent("after"), encoding: .utf8)
            #expect(!before.isEmpty)
            #expect(after == before)  // every terminal mode as it was
        }

        @Test
        func aResizedWindowIsDrawnAgainAtItsNewSize() throws {
            let (pane, _, _) = try Self.sichuanClient()
            try pane.resize(width: 60, height: 12)
            let screen = try pane.waitForScreen("the menu at 60 × 12") {
                $0.count >= 12 && $0[11].hasSuffix("row 1/30")
            }
            #expect(DisplayWidth.of(screen[2]) == 60)
            #expect(screen[2].hasSuffix("¥38"))
            #expect(screen[10].hasPrefix("10     鍋巴肉片"))
            #expect(Self.status(screen).hasSuffix("row 1/30"))
            try pane.send("PageDown")
            try pane.waitForScreen("a page of 10 rows") {
                Self.status($0).hasSuffix("row 11/30") && $0[1].hasPrefix("11 ▾ 早餐")
            }
        }

        @Test
        func anotherDevicesWriteToTheSessionShowsByItselfAndTheCursorStaysOnItsRow() throws {
            let server = try LiveChildServer(arguments: ["--port", "0", "--config", LivePaths.menuConfig])
            let phone = try LiveRawConnection(port: server.port)
            let session = try #require(phone.request("POST", "/sessions").header("X-Session-Id"))
            let pane = try TmuxPane(
                command: "MENU_SESSION_ID=\(session) " + (try Self.clientCommand(port: server.port)), keeping: [server])
            try pane.waitForScreen("the first screen") { Self.fetched($0, 1 ... 28) && $0[28].hasSuffix("¥7.5") }
            try pane.send("1", "1", "Enter")  // the cursor on 早餐, row 11
            try pane.waitForScreen("row 11") { Self.status($0).hasSuffix("row 11/30") }
            // The phone closes 主菜: nine rows go above the cursor, which stays on 早餐, now row 2.
            #expect(
                try phone.request("POST", "/groups/main-courses/toggle", headers: [("X-Session-Id", session)]).status
                    == 200)
            // The status line may show the new count before the rows above the cursor are fetched again.
            let screen = try pane.waitForScreen("主菜 closed by the phone") {
                Self.status($0).hasSuffix("row 2/21") && $0.count > 2 && $0[1] == " 1 ▸ 主菜 (9)  Main Courses"
            }
            #expect(screen[1] == " 1 ▸ 主菜 (9)  Main Courses")
            #expect(screen[2] == " 2 ▾ 早餐 (5)  Breakfast")
            #expect(screen[0].hasSuffix("21 rows, 15 dishes shown"))
        }

        @Test(.timeLimit(.minutes(10)))
        func aLargeMenuPagesDownAndJumpsToItsEndFetchingOnlyThePagesShown() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "menu-client-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let menu = directory.appendingPathComponent("medium.json").path
            let bench = try TerminalTestPaths.menuServer().deletingLastPathComponent().appendingPathComponent(
                "menu-bench"
            ).path
            let written = try ChildProcess.run(executable: bench, arguments: ["--write-menu", "medium", menu])
            try #require(written.termination == .exited(0))
            let server = try LiveChildServer(arguments: ["--port", "0", "--config", menu])
            let relay = try CountingRelay(upstreamPort: server.port)
            defer { relay.stop() }
            let pane = try TmuxPane(command: try Self.clientCommand(port: relay.port), keeping: [server, relay])
            func allRowsShown(_ screen: [String]) -> Bool {
                screen.count > 28 && screen[1 ..< 29].allSatisfy { !$0.contains("…") }
            }
            var screen = try pane.waitForScreen("the first page") {
                $0.count > 1 && $0[1].hasPrefix("    1 ▾ Group 1 ") && allRowsShown($0)
            }
            #expect(screen[0].hasSuffix("18850 rows, 16190 dishes shown"))

            try pane.send(
                "PageDown", "PageDown", "PageDown", "PageDown", "PageDown", "PageDown", "PageDown", "PageDown",
                "PageDown", "PageDown")
            screen = try pane.waitForScreen("ten pages down") {
                Self.status($0).hasSuffix("row 281/18850") && allRowsShown($0)
            }
            #expect(screen[28].hasPrefix("  308 "))
            try pane.send("End")
            screen = try pane.waitForScreen("the last row") {
                Self.status($0).hasSuffix("row 18850/18850") && allRowsShown($0)
            }
            #expect(screen[28].hasPrefix("18850 ▸ Group 100000 (10)"))

            // 50 rows a page, one page fetched on each side of a row looked at: rows 1-308 are pages
            // 0-6 (and 7 beside them), the last rows pages 376 (and 375): at most 10 of the 377 pages.
            let (rows, polls, all) = relay.counts
            #expect(rows >= 3)
            #expect(rows <= 10)
            // + the session, its count, and the long polls that follow other devices' changes.
            #expect(all <= rows + 3 + polls)
        }
    }
}
