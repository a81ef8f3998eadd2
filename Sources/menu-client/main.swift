// menu-client [--lang TAG] [URL]: the Sichuan restaurant's ordering app in a terminal, over MenuClient.
// Connects (GET /count) before touching the terminal, so a wrong URL is a plain message and exit 1.
// Every message goes through StandardError: a server's text in one is shown, never obeyed.

import Foundation
import MenuClient
import MenuTerminal

let usage = """
    usage: menu-client [--lang TAG] [URL]
      Browses the menu a menu-server serves (default http://127.0.0.1:8080) as its table of rows.
      --lang TAG asks for the titles in that language (a BCP 47 tag such as zh-Hant or en, sent as
      Accept-Language); the default is the locale of LC_ALL, LC_MESSAGES or LANG (zh_TW.UTF-8: zh-Hant-TW).
      ↑/↓ move, PageUp/PageDown page, Home/End, Enter opens or closes a group, digits then Enter
      go to that row, / searches (the matches listed as you type, ↑/↓ choose, Enter shows the
      match in the tree, Esc goes back), e/c expand or collapse every group, Ctrl-L redraws, q quits.
      Changes made elsewhere to the session (another device, another tab) show as they happen.
      MENU_SESSION_ID in the environment (never a flag: other users see a process's arguments)
      resumes that session, e.g. the one a phone uses, instead of starting a new one.

    """
/// The usage as lines for standard error (each sanitized there, as every message is).
let usageLines = usage.split(separator: "\n").map { TerminalText($0) }

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    print(usage, terminator: "")
    exit(0)
}
var language = MenuClientConfiguration.language(fromEnvironment: ProcessInfo.processInfo.environment)
if let flag = arguments.firstIndex(of: "--lang") {
    guard flag + 1 < arguments.count, !arguments[flag + 1].isEmpty else {
        StandardError.write(lines: ["menu-client: --lang needs a language tag such as zh-Hant or en"] + usageLines)
        exit(2)
    }
    language = arguments[flag + 1]
    arguments.removeSubrange(flag ... flag + 1)
}
guard arguments.count <= 1, let address = URL(string: arguments.first ?? "http://127.0.0.1:8080"),
    ["http", "https"].contains(address.scheme ?? ""), address.host != nil
else {
    StandardError.write(lines: ["menu-client: \(arguments.first ?? "") is not an http:// or https:// URL"] + usageLines)
    exit(2)
}

let resumed = ProcessInfo.processInfo.environment["MENU_SESSION_ID"].flatMap { $0.isEmpty ? nil : $0 }
let table: MenuTable
do {
    table = try await MenuTable(
        session: MenuSession(
            configuration: MenuClientConfiguration(baseURL: address, language: language),
            restoring: resumed.map { MenuSessionSnapshot(sessionID: $0, layout: nil) }))
} catch {
    StandardError.write("menu-client: cannot open the menu at \(address.absoluteString): \(error)")
    exit(1)
}

let terminal: Terminal
do {
    terminal = try Terminal()
} catch {
    StandardError.write("menu-client: \(error)")
    exit(1)
}
// The menu's own title (GET /menu) beside where it is served; the address alone from an older server.
let summary = try? await table.session.summary()
let host = address.host.map { name in address.port.map { "\(name):\($0)" } ?? name } ?? address.absoluteString
let title = summary?.title.map { "\($0) · \(host)" } ?? address.absoluteString
let stoppedBy = await MenuClientApp(table: table, terminal: terminal, title: title).run()
terminal.restore()
// Stopped by a signal: the shell's convention, 128 + the signal (the terminal is restored either way).
if let stoppedBy { exit(128 + stoppedBy) }
