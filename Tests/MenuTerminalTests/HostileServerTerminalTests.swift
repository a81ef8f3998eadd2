// menu-client in tmux against a hostile server: the built menu-server on a menu whose titles,
// English names and currency carry escape sequences, C1 and bidi controls, behind a proxy that
// answers a toggle, an expand-all, a search and a whole start-up with such text in the error's
// code and message (and in two headers), or as a non-JSON body with raw bytes. Whatever arrives is shown as
// characters (TerminalText): the terminal's title, colours, screen and cursor stay the client's.

import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuTestSupport
import Testing

extension TerminalTests {
    @Suite("Live: menu-client against a hostile server")
    struct HostileServerTerminalTests {
        /// The pane's title, set before the client starts; an OSC 0 or 2 getting through would change it.
        static let paneTitle = "menu-client-test"

        /// What a hostile field carries: a window title (OSC 0, named after the field, so a failure
        /// says which field got through), a red background (CSI and 8-bit CSI), a right-to-left
        /// override, the cursor shown, the alternate screen left and the screen cleared.
        static func payload(_ field: String) -> String {
            "\u{1B}]0;pwned-\(field)\u{7}\u{1B}[41m\u{9B}41m\u{202E}\(field)\u{1B}[?25h\u{1B}[?1049l\u{1B}[2J"
        }

        /// `payload(field)` as the client shows it.
        static func shown(_ field: String) -> String {
            "␛]0;pwned-\(field)␇␛[41m<U+009B>41m<U+202E>\(field)␛[?25h␛[?1049l␛[2J"
        }

        /// A menu of two groups whose own title, titles, English names and a currency are hostile.
        static func hostileMenu() throws -> Data {
            let menu: [String: Any] = [
                "title": "hostile" + payload("menu"),
                "items": [
                    [
                        "id": "group", "title": "G" + payload("title"), "expanded": true,
                        "attributes": ["en": "E" + payload("english")],
                        "items": [
                            [
                                "id": "dish", "title": "Dish" + payload("dish"),
                                "attributes": ["price": 5, "currency": payload("currency")]
                            ],
                            ["id": "plain", "title": "Plain dish", "attributes": ["price": 3, "currency": "CNY"]]
                        ]
                    ] as [String: Any],
                    [
                        "id": "other", "title": "Other", "expanded": true,
                        "items": [["id": "tea", "title": "Tea\u{2066}\u{200F}\u{61C}", "attributes": ["price": 2]]]
                    ]
                ]
            ]
            return try JSONSerialization.data(withJSONObject: menu)
        }

        /// A whole answer: status line, headers (a `Retry-After` and a `Content-Language` that are
        /// hostile too, though the client shows neither), body.
        static func answer(_ status: String, type: String, body: [UInt8]) -> [UInt8] {
            Array("HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n".utf8)
                + Array(
                    "Retry-After: \(payload("retry-after"))\r\nContent-Language: \(payload("language"))\r\n\r\n".utf8)
                + body
        }

        /// A JSON error whose code and message are hostile.
        static func errorAnswer(_ status: String, field: String) throws -> [UInt8] {
            let body = try JSONSerialization.data(withJSONObject: [
                "error": ["code": "bad" + payload("code"), "message": payload(field)]
            ])
            return answer(status, type: "application/json", body: Array(body))
        }

        /// A non-JSON error body: escapes, a raw 8-bit CSI byte, bytes that are not UTF-8, CR LF.
        static let rawBody =
            Array("\u{1B}]0;pwned-body\u{7}\u{1B}[41m".utf8) + [0x9B] + Array("41m".utf8) + [0xFF, 0xC3]
            + Array("\r\nplain".utf8)
        static let rawBodyShown = "␛]0;pwned-body␇␛[41m\u{FFFD}41m\u{FFFD}\u{FFFD}␍␊plain"

        /// The proxy's rule: a start-up under /broken/, a toggle, an expand-all and a search for `zz`
        /// get hostile answers; everything else reaches the real server.
        static let rule: HTTPTestProxy.Rule = { line in
            let hostile: [UInt8]?
            if line.hasPrefix("POST /broken/") || line.hasPrefix("GET /broken/") {
                hostile = try? errorAnswer("500 Internal Server Error", field: "start")
            } else if line.hasPrefix("POST /groups/"), line.contains("/toggle ") {
                hostile = try? errorAnswer("400 Bad Request", field: "message")
            } else if line.hasPrefix("PUT /expansion ") {
                hostile = answer("502 Bad Gateway", type: "text/plain", body: rawBody)
            } else if line.hasPrefix("GET /search?q=zz") {
                hostile = try? errorAnswer("400 Bad Request", field: "search")
            } else {
                hostile = nil
            }
            return hostile.map { .answer($0) } ?? .forward
        }

        /// The real server on the hostile menu and the proxy in front of it; `keeping` holds both for the pane.
        static func hostileServer() throws -> (proxy: HTTPTestProxy, keeping: [AnyObject]) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "menu-client-hostile-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let config = directory.appendingPathComponent("hostile.json")
            try hostileMenu().write(to: config)
            let server = try LiveChildServer(arguments: ["--port", "0", "--config", config.path])
            try? FileManager.default.removeItem(at: directory)  // read at start-up
            let proxy = try HTTPTestProxy(upstreamPort: server.port, rule: rule)
            return (proxy, [server, proxy])
        }

        /// Sets the pane's title, then runs menu-client on `url` and, once it exits, says how.
        static func command(url: String) throws -> String {
            "printf '\\033]2;\(paneTitle)\\033\\\\'; "
                + TerminalLiveTests.quoted(try TerminalTestPaths.menuClient().path) + " " + url
                + "; echo \"menu-client exited $?\"; exec sleep 120"
        }

        /// The SGR parameters in `capture` (`capture-pane -e`) that set a background colour.
        static func backgrounds(in capture: String) -> [String] {
            var found: [String] = []
            for sequence in capture.components(separatedBy: "\u{1B}[").dropFirst() {
                guard let end = sequence.firstIndex(of: "m") else { continue }
                var parameters = sequence[..<end].split(separator: ";", omittingEmptySubsequences: false).map {
                    Int($0) ?? 0
                }[...]
                while let parameter = parameters.popFirst() {
                    if parameter == 38 {
                        parameters = parameters.dropFirst(parameters.first == 5 ? 2 : 4)
                        continue
                    }  // a foreground colour
                    if (40 ... 48).contains(parameter) || (100 ... 107).contains(parameter) {
                        found.append(String(sequence[..<end]))
                    }
                }
            }
            return found
        }

        /// What must hold whatever the server sent: the title the pane had, no background colour,
        /// the text of every escape only visible (no ESC among the characters shown).
        static func expectTerminalUntouched(_ pane: TmuxPane, _ step: String) throws {
            try #expect(pane.format("#{pane_title}") == paneTitle, "\(step)")
            let styled = try pane.capture("-e")
            #expect(backgrounds(in: styled).isEmpty, "\(step): \(styled)")
            #expect(!styled.contains("\u{1B}]"), "\(step)")
            #expect(!(try pane.capture()).contains("\u{1B}"), "\(step)")
        }

        static func status(_ screen: [String]) -> String { screen.last { !$0.isEmpty } ?? "" }

        /// Waits until the status line is `shown`, or the terminal was driven (its title changed, the
        /// alternate screen left), in which case the checks that follow say how.
        @discardableResult
        static func waitForStatus(_ pane: TmuxPane, _ what: String, _ shown: @escaping (String) -> Bool) throws
            -> [String]
        {
            try pane.waitForScreen(what) { screen in
                shown(status(screen)) || (try? pane.format("#{pane_title} #{alternate_on}")) != "\(paneTitle) 1"
            }
        }

        @Test
        func hostileTitlesErrorsBodiesAndSearchPathsAreShownAsTextAndNeverObeyed() throws {
            let (proxy, keeping) = try Self.hostileServer()
            defer { proxy.stop() }
            let pane = try TmuxPane(
                command: try Self.command(url: "http://127.0.0.1:\(proxy.port)"), width: 220, height: 12,
                keeping: keeping)
            var screen = try pane.waitForScreen("the hostile menu") { $0.count > 5 && $0[5].contains("Tea") }
            // The menu's own title (GET /menu) is server text too: shown, never obeyed.
            let header = " menu-client  hostile" + Self.shown("menu") + " · 127.0.0.1:\(proxy.port) "
            #expect(screen[0].hasPrefix(header), "\(screen[0])")
            #expect(screen[1].hasPrefix("1 ▾ G" + Self.shown("title") + " (2)  E" + Self.shown("english")))
            #expect(screen[2].hasPrefix("2     Dish" + Self.shown("dish")))
            #expect(screen[2].hasSuffix("5 " + Self.shown("currency")))
            #expect(screen[5].hasPrefix("5     Tea<U+2066><U+200F><U+061C>"))
            try #expect(pane.format("#{alternate_on} #{cursor_flag}") == "1 0")
            try Self.expectTerminalUntouched(pane, "the first screen")

            try pane.send("Enter")  // a toggle: 400 with a hostile code and message
            screen = try Self.waitForStatus(pane, "the toggle's error") { $0.hasPrefix("the server answered 400") }
            #expect(
                Self.status(screen).hasPrefix(
                    "the server answered 400 bad" + Self.shown("code") + ": " + Self.shown("message")))
            #expect(screen[0].hasPrefix(header))  // not cleared
            try #expect(pane.format("#{alternate_on} #{cursor_flag}") == "1 0")
            try Self.expectTerminalUntouched(pane, "the toggle's error")

            try pane.send("e")  // expand all: 502 with a body that is not JSON, nor UTF-8
            screen = try Self.waitForStatus(pane, "the expand-all's error") { $0.contains("status 502") }
            #expect(
                Self.status(screen).hasPrefix(
                    "an answer outside the menu-server contract (status 502): no error body: " + Self.rawBodyShown))
            try Self.expectTerminalUntouched(pane, "the expand-all's error")

            try pane.send("/")
            try pane.send("Dish", literal: true)  // the real server's matches: paths of hostile titles
            screen = try Self.waitForStatus(pane, "the matches of Dish") {
                $0.hasSuffix("matches") || $0.hasSuffix("1 match")
            }
            #expect(
                screen.contains { $0.hasPrefix(" ▸ G" + Self.shown("title") + " › Dish" + Self.shown("dish")) },
                "\(screen.joined(separator: "\n"))")
            try Self.expectTerminalUntouched(pane, "the search's paths")

            try pane.send("Escape", "/")
            try pane.send("zz", literal: true)  // a search answered 400 with a hostile message
            screen = try Self.waitForStatus(pane, "the search's error") { $0.contains("the server answered 400") }
            #expect(Self.status(screen).hasPrefix("search: zz▏"))
            #expect(
                Self.status(screen).hasSuffix(
                    "  the server answered 400 bad" + Self.shown("code") + ": " + Self.shown("search")))
            try #expect(pane.format("#{alternate_on} #{cursor_flag}") == "1 0")
            try Self.expectTerminalUntouched(pane, "the search's error")

            try pane.send("Escape", "q")
            try pane.waitForScreen("the client gone") { $0.contains("menu-client exited 0") }
            try Self.expectTerminalUntouched(pane, "after quitting")
            #expect(proxy.requests.contains { $0.hasPrefix("PUT /expansion ") })  // the hostile answers were asked for
        }

        @Test(.timeLimit(.minutes(10)))
        func aHostileErrorAtStartUpIsShownOnStandardErrorAsText() throws {
            let (proxy, keeping) = try Self.hostileServer()
            defer { proxy.stop() }
            let pane = try TmuxPane(
                command: try Self.command(url: "http://127.0.0.1:\(proxy.port)/broken"), width: 100, height: 12,
                keeping: keeping)
            try pane.waitForScreen("the client gone") { $0.contains("menu-client exited 1") }
            let shown = try pane.capture("-J")
            #expect(
                shown.contains(
                    "menu-client: cannot open the menu at http://127.0.0.1:\(proxy.port)/broken: the server answered 500 bad"
                        + Self.shown("code") + ": " + Self.shown("start")), "\(shown)")
            #expect(proxy.requests.allSatisfy { $0.contains(" /broken/") })
            try Self.expectTerminalUntouched(pane, "the start-up's error")
        }
    }
}
