// `menu-admin`, the admin API from a terminal: the built executable against a live server's admin
// listener, its token read from a file.

import Foundation
import MenuApp
import MenuAppTestSupport
import MenuAvailability
import MenuService
import MenuTestSupport
import Testing

extension AppTests {
    @Suite("menu-admin: sold out, paused, available, list and reload from a terminal")
    struct AdminCommandTests {
        @Test func aDishSoldOutFromTheTerminalShowsOnTheRowsAndTheListAndMistakesSayWhy() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("admin-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let (server, adminPort, _, tokens) = try LiveAdminTests.start(directory)
            defer { server.shutdown() }
            let command = try LivePaths.executable(named: "menu-admin")
            // Under AddressSanitizer (scripts/test's first pass) LeakSanitizer counts what the
            // top-level code of an async main.swift still holds when the process exits (its task's
            // frame: the request body, the answer) as leaked, and exits 1: a one-shot command's
            // exit is not a leak, so the check is off for this child only.
            let quiet = ["ASAN_OPTIONS": "detect_leaks=0"]
            func admin(_ arguments: [String], tokenFile: String? = tokens.path) throws -> LiveExit {
                try liveRun(
                    command, ["--url", "http://127.0.0.1:\(adminPort)"] + arguments,
                    environment: quiet.merging(tokenFile.map { ["MENU_ADMIN_TOKEN_FILE": $0] } ?? [:]) { $1 })
            }

            let sold = try admin(["sold-out", "mapo-tofu", "rice", "--until", "+2h", "--reason", "the wok is busy"])
            #expect(sold.status == 0, "\(sold.stderr)")
            #expect(sold.stdout == "revision 1: changed mapo-tofu, rice\n")
            let entries = server.server.service.availabilityEntries().entries
            #expect(entries.map(\.0) == ["mapo-tofu", "rice"])
            #expect(entries.allSatisfy { $0.1.state == .soldOut && $0.1.reason == "the wok is busy" })
            let until = try #require(entries.first?.1.until)
            let twoHours = Timestamp.now.adding(milliseconds: 7_200_000)
            #expect(abs(until.milliseconds - twoHours.milliseconds) < 600_000, "\(until) is about two hours ahead")

            let list = try admin(["list"])
            #expect(list.status == 0 && list.stdout.hasPrefix("mapo-tofu\tsold_out\t"), "\(list.stdout)")
            #expect(try admin(["pause", "drinks", "--until", "19:30"]).status == 0)
            #expect(try admin(["available", "rice"]).stdout == "revision 3: changed rice\n")

            // Mistakes: the server's refusal, a usage mistake, no token, no server.
            let unknown = try admin(["sold-out", "no-such-dish"])
            #expect(
                unknown.status == 1 && unknown.stderr.contains("unknown_node")
                    && unknown.stderr.contains("no-such-dish"))
            let badTime = try admin(["pause", "rice", "--until", "25:99"])
            #expect(badTime.status == 2 && badTime.stderr.contains("--until 25:99"))
            let noToken = try admin(["list"], tokenFile: nil)
            #expect(noToken.status == 2 && noToken.stderr.contains("--token-file"))
            let wrongToken = directory.appendingPathComponent("wrong")
            try Data("# a comment\nwrong-token-0123456789abcdef\n".utf8).write(to: wrongToken)
            let refused = try admin(["list"], tokenFile: wrongToken.path)
            #expect(refused.status == 1 && refused.stderr.contains("401 invalid_token"))
            let nowhere = try liveRun(
                command, ["--url", "http://127.0.0.1:1", "list"],
                environment: quiet.merging(["MENU_ADMIN_TOKEN_FILE": tokens.path]) { $1 })
            #expect(nowhere.status == 3)
            #expect(server.server.service.availabilityEntries().entries.map(\.0) == ["drinks", "mapo-tofu"])
        }
    }
}
