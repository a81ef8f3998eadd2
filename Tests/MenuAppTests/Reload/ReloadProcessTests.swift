// Live reload, tested on the built `menu-server` executable: SIGHUP and `--watch-config yes`
// re-read the `--config` file; a valid new menu is served (sessions carried over by id), an invalid
// one changes nothing and every problem is logged; SIGTERM still exits 0. Each test writes its own
// configs into a temporary directory. Waits are bounded (`eventually`); nothing is timed.

import ChildProcess
import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuModel
import MenuTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One node of a fixture menu: a group (with its default expansion) or a row.
indirect enum ReloadNode {
    case group(String, expanded: Bool, [ReloadNode])
    case row(String)

    var json: String {
        switch self {
        case .row(let id): #"{"id":"\#(id)","title":"\#(id.capitalized)"}"#
        case .group(let id, let expanded, let items):
            #"{"id":"\#(id)","title":"\#(id.capitalized)","expanded":\#(expanded),"items":["#
                + items.map(\.json).joined(separator: ",") + "]}"
        }
    }

    /// Each group's default expansion, by id (nested groups included).
    static func defaults(_ nodes: [ReloadNode]) -> [String: Bool] {
        var result: [String: Bool] = [:]
        for case .group(let id, let expanded, let items) in nodes {
            result[id] = expanded
            result.merge(defaults(items)) { first, _ in first }
        }
        return result
    }
}

/// A menu config of the tests' own.
func reloadMenu(_ nodes: [ReloadNode]) -> String {
    #"{"title":"Reload fixture","items":["# + nodes.map(\.json).joined(separator: ",") + "]}\n"
}

/// A temporary directory with the config file a child menu-server serves, written the ways an
/// operator replaces it. The directory is removed on deinit.
final class ReloadFixture {
    let directory: URL
    let configPath: String

    init(configName: String = "menu.json") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "menu-server-reload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configPath = directory.appendingPathComponent(configName).path
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Writes `text` to a temporary name in the directory and `rename(2)`s it over `path`
    /// (default: the config): readers see the old file or the new one, never a part.
    func replace(with text: String, at path: String? = nil) throws {
        let target = path ?? configPath
        let temporary = directory.appendingPathComponent(".tmp-\(UUID().uuidString)").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, target) == 0 else {
            throw LiveError("rename \(temporary) -> \(target): \(String(cString: strerror(errno)))")
        }
    }

    /// Truncates the config and writes `text` into the same inode (open, write, close).
    func rewriteInPlace(with text: String) throws {
        let descriptor = open(configPath, O_WRONLY | O_TRUNC)
        guard descriptor >= 0 else { throw LiveError("open \(configPath): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
            throw LiveError("short write to \(configPath)")
        }
    }

    /// The menu the config holds now, read by MenuModel as the server reads it.
    func menu() throws -> Menu { try Menu(contentsOfFile: configPath) }

    /// The arguments of a child menu-server on this config: port 0, then `flags`.
    func arguments(_ flags: [String] = []) -> [String] { ["--port", "0", "--config", configPath] + flags }

    /// Writes `nodes` as the config and starts a child menu-server on it; returns the child and
    /// the version it serves.
    func serve(_ nodes: [ReloadNode], flags: [String] = []) throws -> (LiveChildServer, String) {
        try replace(with: reloadMenu(nodes))
        let version = try menu().version
        return (try LiveChildServer(arguments: arguments(flags)), version)
    }
}

extension LiveChildServer {
    /// Bytes of standard error so far: pass to ``awaitLog(after:_:)`` to look only at what follows.
    var logMark: Int { stderrText.value.utf8.count }

    /// The log written after `mark`, once it contains `text` (waiting at most `eventuallyBound`);
    /// records an issue with the log when it never does.
    @discardableResult
    func awaitLog(after mark: Int, _ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        func since() -> String { String(decoding: Array(stderrText.value.utf8.dropFirst(mark)), as: UTF8.self) }
        let found = eventually(every: .milliseconds(10)) { since().contains(text) }
        #expect(
            found, "the log never said \(String(reflecting: text)); it has:\n\(stderrText.value)",
            sourceLocation: sourceLocation)
        return since()
    }

    /// Sends SIGHUP and returns the log it caused once that contains `text`.
    @discardableResult
    func hangUp(awaiting text: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        let mark = logMark
        process.send(SIGHUP)
        return awaitLog(after: mark, text, sourceLocation: sourceLocation)
    }

    func request(_ method: String, _ target: String, session: String? = nil, body: String? = nil) throws -> LiveResponse
    {
        try LiveRawConnection(port: port).request(
            method, target, headers: session.map { [("X-Session-Id", $0)] } ?? [],
            body: body.map { Array($0.utf8) } ?? [])
    }

    func count(session: String? = nil) throws -> LiveCount {
        try request("GET", "/count", session: session).decode(LiveCount.self)
    }

    func newSession() throws -> String {
        let response = try request("POST", "/sessions")
        #expect(response.status == 201, "\(response)")
        return try response.decode(LiveSessionBody.self).sessionId
    }

    func setExpansion(_ group: String, _ isExpanded: Bool, session: String) throws -> LiveResponse {
        try request("PUT", "/groups/\(group)/expansion", session: session, body: #"{"isExpanded":\#(isExpanded)}"#)
    }

    /// Every visible group's `isExpanded` for `session` (the fixtures keep their groups at the top level).
    func groupStates(session: String? = nil) throws -> [String: Bool] {
        let page = try request("GET", "/rows?limit=500", session: session).decode(LiveRowsPage.self)
        return Dictionary(uniqueKeysWithValues: page.rows.compactMap { row in row.isExpanded.map { (row.id, $0) } })
    }

    /// SIGTERM, then the checks every clean stop must pass.
    func expectCleanStop(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            signalAndWait(SIGTERM), "menu-server did not exit after SIGTERM; log:\n\(stderrText.value)",
            sourceLocation: sourceLocation)
        #expect(termination == .exited(0), "log:\n\(stderrText.value)", sourceLocation: sourceLocation)
        #expect(
            stderrText.value.contains("signal 15, finishing requests in flight"), "\(stderrText.value)",
            sourceLocation: sourceLocation)
    }
}

extension AppTests {
    @Suite("Live: reloading the menu of the menu-server executable")
    struct ReloadProcessTests {
        /// Six groups, so that each clause of the carry-over rule has one to act on.
        // Computed, not a stored static: LeakSanitizer cannot see the pointers inside stored static
        // arrays of enums with payloads and reports them as leaked at exit.
        static var first: [ReloadNode] {
            [
                .group("starters", expanded: true, [.row("soup"), .row("salad")]),
                .group("mains", expanded: false, [.row("fish"), .row("duck")]),
                .group("drinks", expanded: false, [.row("tea")]),
                .group("desserts", expanded: false, [.row("cake")]),
                .group("sides", expanded: false, [.row("rice")]),
                .group("specials", expanded: true, [.row("hotpot")])
            ]
        }
        /// starters' and sides' and specials' defaults flip, drinks becomes a row, desserts leaves,
        /// wine arrives, mains gains a row.
        static var second: [ReloadNode] {
            [
                .group("starters", expanded: false, [.row("soup"), .row("salad")]),
                .group("mains", expanded: false, [.row("fish"), .row("duck"), .row("noodles")]),
                .row("drinks"),
                .group("sides", expanded: true, [.row("rice")]),
                .group("specials", expanded: false, [.row("hotpot")]),
                .group("wine", expanded: true, [.row("red")])
            ]
        }
        /// sides' and specials' defaults flip back, desserts returns.
        static var third: [ReloadNode] {
            [
                .group("starters", expanded: false, [.row("soup"), .row("salad")]),
                .group("mains", expanded: false, [.row("fish"), .row("duck"), .row("noodles")]),
                .row("drinks"),
                .group("desserts", expanded: false, [.row("cake")]),
                .group("sides", expanded: false, [.row("rice")]),
                .group("specials", expanded: true, [.row("hotpot")]),
                .group("wine", expanded: true, [.row("red")])
            ]
        }

        @Test
        func sighupServesTheChangedConfigAndCarriesSessionsOverByTheRule() throws {
            let fixture = try ReloadFixture()
            let (child, firstVersion) = try fixture.serve(Self.first)
            defer { child.stop() }
            #expect(try child.count().version == firstVersion)

            let changed = try child.newSession()
            for (group, isExpanded) in [
                ("mains", true), ("drinks", true), ("desserts", true), ("sides", true), ("specials", false)
            ] {
                #expect(try child.setExpansion(group, isExpanded, session: changed).status == 200)
            }
            let untouched = try child.newSession()
            #expect(
                try child.groupStates(session: changed)
                    == [
                        "starters": true, "mains": true, "drinks": true, "desserts": true, "sides": true,
                        "specials": false
                    ])

            try fixture.replace(with: reloadMenu(Self.second))
            let second = try fixture.menu()
            #expect(second.version != firstVersion)
            let log = child.hangUp(
                awaiting:
                    "menu-server: SIGHUP: menu reloaded: version \(firstVersion) -> \(second.version), \(second.nodeCount) nodes; "
            )
            #expect(log.contains("; 2 sessions carried over in "), "\(log)")
            #expect(try child.count().version == second.version)
            #expect(try child.count(session: changed).version == second.version)
            // starters: untouched, follows its new default. mains: changed, kept. drinks (now a row) and
            // desserts (gone): dropped. sides, specials: their defaults changed; the explicit choice kept.
            // wine: new, its default.
            #expect(
                try child.groupStates(session: changed)
                    == ["starters": false, "mains": true, "sides": true, "specials": false, "wine": true])
            #expect(
                try child.groupStates(session: untouched)
                    == ReloadNode.defaults(Self.second).filter { $0.key != "drinks" })

            // sides and specials now equal their defaults, so they follow the next change of default;
            // desserts' old choice was dropped and does not come back; mains stays changed.
            try fixture.replace(with: reloadMenu(Self.third))
            let third = try fixture.menu()
            child.hangUp(
                awaiting:
                    "menu-server: SIGHUP: menu reloaded: version \(second.version) -> \(third.version), \(third.nodeCount) nodes; "
            )
            #expect(
                try child.groupStates(session: changed)
                    == [
                        "starters": false, "mains": true, "desserts": false, "sides": false, "specials": true,
                        "wine": true
                    ])
            #expect(
                try child.groupStates(session: untouched)
                    == ReloadNode.defaults(Self.third).filter { $0.key != "drinks" })
            // The carried-over session still takes writes, answered from the new menu.
            let write = try child.setExpansion("wine", false, session: changed)
            #expect(write.status == 200, "\(write)")
            #expect(try write.decode(LiveChange.self).version == third.version)
            child.expectCleanStop()
        }

        @Test
        func sighupWithAnInvalidConfigKeepsServingTheOldMenuAndLogsEveryProblem() throws {
            let fixture = try ReloadFixture()
            let (child, firstVersion) = try fixture.serve(Self.first)
            defer { child.stop() }
            let session = try child.newSession()
            #expect(try child.setExpansion("mains", true, session: session).status == 200)
            let before = try child.count(session: session)

            // Two problems in one file: both are named, with their JSON paths.
            try fixture.replace(
                with: #"{"title":"x","items":[{"id":"ok","title":"A"},{"id":"bad id!","title":"B"},"#
                    + #"{"id":"g","title":"G","items":[{"id":"r","title":""}]}]}"#)
            let log = child.hangUp(awaiting: "still serving version \(firstVersion)")
            #expect(
                log.contains(
                    "menu-server: SIGHUP: still serving version \(firstVersion); cannot reload menu config \(fixture.configPath): invalid menu config (2 problems):"
                ), "\(log)")
            #expect(log.contains("items[1].id") && log.contains("bad id!"), "\(log)")
            #expect(log.contains("items[2].items[0].title"), "\(log)")
            #expect(try child.count(session: session) == before)
            #expect(try child.count().version == firstVersion)

            // Not JSON, then no file at all: each logged, the old menu still served.
            try fixture.rewriteInPlace(with: #"{"title":"#)
            let notJSON = child.hangUp(awaiting: "still serving version \(firstVersion)")
            #expect(notJSON.contains("not valid JSON"), "\(notJSON)")
            try FileManager.default.removeItem(atPath: fixture.configPath)
            let missing = child.hangUp(awaiting: "still serving version \(firstVersion)")
            #expect(missing.contains("cannot read") && missing.contains(fixture.configPath), "\(missing)")
            #expect(try child.count(session: session) == before)

            // A valid file after the failures: reloaded from the version served all along.
            try fixture.replace(with: reloadMenu(Self.second))
            let second = try fixture.menu()
            child.hangUp(awaiting: "menu-server: SIGHUP: menu reloaded: version \(firstVersion) -> \(second.version), ")
            #expect(try child.count().version == second.version)
            #expect(try child.groupStates(session: session)["mains"] == true)
            child.expectCleanStop()
        }

        @Test
        func sighupWithTheIdenticalFileLogsConfigUnchangedAndKeepsTheVersion() throws {
            let fixture = try ReloadFixture()
            let text = reloadMenu(Self.first)
            try fixture.replace(with: text)
            let version = try fixture.menu().version
            let child = try LiveChildServer(arguments: fixture.arguments())
            defer { child.stop() }
            let session = try child.newSession()
            #expect(try child.setExpansion("starters", false, session: session).status == 200)
            let before = try child.groupStates(session: session)

            let unchanged = "menu-server: SIGHUP: config unchanged (version \(version)); nothing to reload"
            child.hangUp(awaiting: unchanged)
            try fixture.replace(with: text)  // the same bytes in a new inode
            let log = child.hangUp(awaiting: unchanged)
            #expect(!log.contains("menu reloaded"), "\(log)")
            #expect(try child.count().version == version)
            #expect(try child.groupStates(session: session) == before)
            child.expectCleanStop()
        }

        @Test
        func watchConfigReloadsOnARenameIntoPlaceAndOnAnInPlaceRewrite() throws {
            let fixture = try ReloadFixture()
            let (child, firstVersion) = try fixture.serve(Self.first, flags: ["--watch-config", "yes"])
            defer { child.stop() }
            let session = try child.newSession()
            #expect(try child.setExpansion("mains", true, session: session).status == 200)

            var mark = child.logMark
            try fixture.replace(with: reloadMenu(Self.second))
            let second = try fixture.menu().version
            child.awaitLog(
                after: mark,
                "menu-server: the config file changed: menu reloaded: version \(firstVersion) -> \(second), ")
            #expect(try child.count().version == second)
            #expect(try child.groupStates(session: session)["mains"] == true)

            mark = child.logMark
            try fixture.rewriteInPlace(with: reloadMenu(Self.third))
            let third = try fixture.menu().version
            child.awaitLog(
                after: mark, "menu-server: the config file changed: menu reloaded: version \(second) -> \(third), ")
            #expect(try child.count().version == third)

            // An invalid rewrite is logged and changes nothing.
            mark = child.logMark
            try fixture.rewriteInPlace(with: #"{"title":"x","items":[{"id":"a","title":"A"},{"id":"a","title":"B"}]}"#)
            let log = child.awaitLog(after: mark, "still serving version \(third)")
            #expect(
                log.contains(
                    "menu-server: the config file changed: still serving version \(third); cannot reload menu config \(fixture.configPath)"
                ), "\(log)")
            #expect(log.contains("items[1].id"), "\(log)")
            #expect(try child.count().version == third)
            child.expectCleanStop()
        }

        /// Kubernetes mounts a ConfigMap as `menu.json -> ..data/menu.json`, `..data -> ..<timestamp>`,
        /// and updates it by writing a new timestamped directory and renaming a fresh symlink over `..data`.
        @Test
        func watchConfigReloadsWhenADataSymlinkIsSwappedTheWayKubernetesDoes() throws {
            let fixture = try ReloadFixture()
            let manager = FileManager.default
            for (name, nodes) in [("..2026_v1", Self.first), ("..2026_v2", Self.second)] {
                let version = fixture.directory.appendingPathComponent(name)
                try manager.createDirectory(at: version, withIntermediateDirectories: false)
                try Data(reloadMenu(nodes).utf8).write(to: version.appendingPathComponent("menu.json"))
            }
            let data = fixture.directory.appendingPathComponent("..data").path
            try manager.createSymbolicLink(atPath: data, withDestinationPath: "..2026_v1")
            try manager.createSymbolicLink(atPath: fixture.configPath, withDestinationPath: "..data/menu.json")
            let firstVersion = try fixture.menu().version
            let child = try LiveChildServer(arguments: fixture.arguments(["--watch-config", "yes"]))
            defer { child.stop() }
            #expect(try child.count().version == firstVersion)

            let mark = child.logMark
            let temporary = fixture.directory.appendingPathComponent("..data_tmp").path
            try manager.createSymbolicLink(atPath: temporary, withDestinationPath: "..2026_v2")
            #expect(rename(temporary, data) == 0, "rename: \(String(cString: strerror(errno)))")
            let second = try fixture.menu().version
            #expect(second != firstVersion)
            child.awaitLog(
                after: mark,
                "menu-server: the config file changed: menu reloaded: version \(firstVersion) -> \(second), ")
            #expect(try child.count().version == second)
            child.expectCleanStop()
        }

        /// Clients read throughout a series of reloads, and SIGTERM arrives right behind a last SIGHUP
        /// and a last file change: every answer comes whole from one of the two menus, and the server
        /// still exits 0.
        @Test
        func sigtermDuringAndAfterReloadsUnderReadsStopsCleanlyWithExitZero() throws {
            let fixture = try ReloadFixture()
            let menus = [reloadMenu(Self.first), reloadMenu(Self.second)]
            var expected: [String: Int] = [:]  // version -> default row count
            for text in menus {
                try fixture.replace(with: text)
                let menu = try fixture.menu()
                expected[menu.version] = FlattenedView(menu: menu).count
            }
            try fixture.replace(with: menus[0])
            let child = try LiveChildServer(arguments: fixture.arguments(["--watch-config", "yes"]))
            defer { child.stop() }

            let problems = LiveLocked<[String]>([])
            let readers = DispatchGroup()
            let table = expected
            let port = child.port
            for _ in 0 ..< 2 {
                DispatchQueue.global().async(group: readers) {
                    for _ in 0 ..< 150 {
                        do {
                            let page = try LiveRawConnection(port: port).request("GET", "/rows?limit=500").decode(
                                LiveRowsPage.self)
                            if table[page.version] != page.count || page.rows.count != page.count {
                                problems.update {
                                    $0.append(
                                        "version \(page.version) with \(page.count) rows (\(page.rows.count) listed)")
                                }
                            }
                        } catch {
                            problems.update { $0.append("\(error)") }
                        }
                    }
                }
            }
            for round in 1 ... 6 {
                let text = menus[round % 2]
                try fixture.replace(with: text)
                let version = try fixture.menu().version
                // The watcher and SIGHUP race for the same file: whichever reloads first, the
                // server ends up on `version`, and the other one finds it unchanged.
                child.process.send(SIGHUP)
                #expect(
                    eventually { (try? child.count().version) == version },
                    "round \(round); log:\n\(child.stderrText.value)")
            }
            #expect(readers.wait(timeout: .now() + 120) == .success, "the readers did not finish")
            #expect(problems.value.isEmpty, "\(problems.value.prefix(5))")

            try fixture.replace(with: menus[1])
            child.process.send(SIGHUP)
            child.expectCleanStop()
            #expect(!child.stderrText.value.contains("Fatal error"), "\(child.stderrText.value)")
        }

        struct BadWatch: Sendable, CustomTestStringConvertible {
            var arguments: [String]
            var environment: [String: String] = [:]
            var mentions: [String]
            var testDescription: String {
                (environment.map { "\($0.key)=\($0.value)" } + arguments).joined(separator: " ")
            }
        }

        @Test(arguments: [
            BadWatch(arguments: ["--watch-config", "maybe"], mentions: ["--watch-config", "maybe", "yes or no"]),
            BadWatch(arguments: ["--watch-config=maybe"], mentions: ["--watch-config", "maybe"]),
            BadWatch(arguments: ["--watch-config", "true"], mentions: ["--watch-config", "true"]),
            BadWatch(
                arguments: [], environment: ["MENU_WATCH_CONFIG": "maybe"], mentions: ["MENU_WATCH_CONFIG", "maybe"])
        ])
        func watchConfigOtherThanYesOrNoIsRefusedAtStartUpNamingTheFlag(bad: BadWatch) throws {
            let fixture = try ReloadFixture()
            try fixture.replace(with: reloadMenu(Self.first))
            let exit = try liveRun(
                try LivePaths.executable(), fixture.arguments(bad.arguments), environment: bad.environment)
            let stderr = exit.stderr
            #expect(exit.termination == .exited(2), "\(stderr)")
            #expect(exit.stdout.isEmpty, "no listening line expected")
            #expect(stderr.hasPrefix("menu-server: "), "\(stderr)")
            for mention in bad.mentions {
                #expect(stderr.contains(mention), "stderr should name \(mention): \(stderr)")
            }
        }
    }
}
