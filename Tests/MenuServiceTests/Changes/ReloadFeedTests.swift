import Foundation
import HTTPCore
import MenuService
import MenuServiceTestSupport
import MenuSessions
import MenuTestSupport
import NaiveReference
import Synchronization
import Testing

@testable import MenuModel

/// A menu reload in the changes feed of the in-memory store (issue 26 §2): a session's rows on the
/// old menu, with the reload entry's splices applied (inserted rows fetched from the new menu) and
/// its reconfigured rows fetched again, are its rows on the new menu in every field; the entry is
/// one revision; only the newest reload can be told, so a `since` before an older one is 410.
struct ReloadFeedTests {
    /// A session's whole table, each row without its `index` (which is its position).
    private static func rows(_ service: MenuAPI, _ session: String) throws -> [NSDictionary] {
        let response = service.call("GET", "/rows", query: [("offset", "0"), ("limit", "500")], session: session)
        try #require(response.status == 200)
        let rows = try #require(response.json["rows"] as? [[String: Any]])
        #expect(rows.enumerated().allSatisfy { $0.element["index"] as? Int == $0.offset })
        return rows.map { row in
            var row = row
            row["index"] = nil
            return row as NSDictionary
        }
    }

    private static func revision(_ service: MenuAPI, _ session: String) -> Int? {
        service.call("GET", "/count", session: session).json["revision"] as? Int
    }

    /// `old` with the reload's splices applied, inserted and reconfigured rows taken from `new` as
    /// a client fetches them.
    private static func applied(_ reload: [String: Any], to old: [NSDictionary], new: [NSDictionary]) throws
        -> [NSDictionary]
    {
        var rows = old
        for change in try #require(reload["changes"] as? [[String: Int]]) {
            let (at, inserted, removed) = (change["at"]!, change["inserted"]!, change["removed"]!)
            try #require(at + removed <= rows.count && at + inserted <= new.count)
            rows.replaceSubrange(at ..< at + removed, with: new[at ..< at + inserted])
        }
        for index in try #require(reload["reconfigured"] as? [Int]) {
            try #require(index < rows.count)
            rows[index] = new[index]
        }
        return rows
    }

    @Test(arguments: 0 ..< 3 as Range<UInt64>)
    func aReloadEntryTakesEachSessionsOldRowsToItsNewRowsInEveryField(seed: UInt64) throws {
        var rng = SplitMix64(state: 0x2E10 ^ seed &* 0x9E37_79B9_7F4A_7C15)
        for round in 0 ..< 15 {
            var edits = MenuEdits(randomTree(nodes: Int.random(in: 1 ... 80, using: &rng), maxDepth: 4, using: &rng))
            let oldMenu = try makeMenu(edits.items)
            let service = MenuAPI(menu: oldMenu, store: InMemorySessionStore(menu: oldMenu), maxLimit: 500)
            let groups = oldMenu.nodes.filter(oldMenu.isGroup).map(oldMenu.id(of:))
            var sessions: [(id: String, revision: Int, rows: [NSDictionary])] = []
            for _ in 0 ..< 4 {
                let id = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
                for _ in 0 ..< Int.random(in: 0 ... 12, using: &rng) {
                    guard let group = groups.randomElement(using: &rng) else { break }
                    #expect(service.call("POST", "/groups/\(group)/toggle", session: id).status == 200)
                }
                sessions.append((id, try #require(Self.revision(service, id)), try Self.rows(service, id)))
            }
            edits.applyRandom(Int.random(in: 1 ... 8, using: &rng), using: &rng)
            let newMenu = try makeMenu(edits.items)
            let installed = service.install(newMenu)
            if round % 2 == 0 { service.store.adopt(installed) }  // else each session is carried on its next read
            let context = "seed \(seed), round \(round): \(edits.log.joined(separator: "; "))"
            for session in sessions {
                let answer = service.call(
                    "GET", "/changes", query: [("since", "\(session.revision)")], session: session.id)
                #expect(answer.status == 200, "\(context)")
                #expect(
                    answer.json["revision"] as? Int == session.revision + 1, "one revision for the reload; \(context)")
                #expect(answer.json["version"] as? String == newMenu.version)
                let entries = try #require(answer.json["changes"] as? [[String: Any]])
                try #require(entries.count == 1, "\(context)")
                #expect(entries[0]["revision"] as? Int == session.revision + 1)
                let reload = try #require(entries[0]["reload"] as? [String: Any], "\(context)")
                #expect(reload["version"] as? String == newMenu.version)
                let new = try Self.rows(service, session.id)
                #expect(try Self.applied(reload, to: session.rows, new: new) == new, "\(context)")
            }
        }
    }

    @Test func aReloadOfNewTitlesReconfiguresEveryKeptRowAndAnIfMatchOfTheOldMenuIsRefused() throws {
        let first = ReloadMenus.menu(generation: 1)
        let service = MenuAPI(menu: first, store: InMemorySessionStore(menu: first), maxLimit: 500)
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        #expect(service.call("POST", "/groups/sides/toggle", session: session).status == 200)
        let before = service.call("GET", "/rows", query: [("offset", "0"), ("limit", "500")], session: session)
        let tag = try #require(before.header("ETag"))
        let old = try Self.rows(service, session)
        service.install(ReloadMenus.menu(generation: 2))  // every title changes, mains collapses
        let answer = service.call("GET", "/changes", query: [("since", "1")], session: session)
        let reload = try #require((answer.json["changes"] as? [[String: Any]])?.first?["reload"] as? [String: Any])
        let new = try Self.rows(service, session)
        #expect(try Self.applied(reload, to: old, new: new) == new)
        let reconfigured = Set(try #require(reload["reconfigured"] as? [Int]))
        let inserted = (reload["changes"] as? [[String: Int]] ?? []).flatMap {
            $0["at"]! ..< $0["at"]! + $0["inserted"]!
        }
        #expect(reconfigured == Set(new.indices).subtracting(inserted), "every kept row has a new title")

        let refused = service.respond(
            to: HTTPRequest(
                method: "POST", path: "/groups/sides/toggle", query: [],
                headers: [("x-session-id", session), ("if-match", tag)], body: []))
        #expect(refused.status == 412)
        #expect(refused.json["revision"] as? Int == 2, "the reload was a revision")
    }

    @Test func twoReloadsWithoutARead() throws {
        let first = ReloadMenus.menu(generation: 1)
        let service = MenuAPI(menu: first, store: InMemorySessionStore(menu: first), maxLimit: 500)
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        #expect(service.call("POST", "/groups/sides/toggle", session: session).status == 200)
        service.store.adopt(service.install(ReloadMenus.menu(generation: 2)))
        service.store.adopt(service.install(ReloadMenus.menu(generation: 3)))
        // The first reload's menu is gone: a since before it cannot be answered.
        let gone = service.call("GET", "/changes", query: [("since", "1")], session: session)
        #expect(gone.status == 410)
        #expect(gone.errorCode == "gone")
        #expect(service.call("GET", "/count", session: session).json["revision"] as? Int == 3)
        // After it, the second reload is an entry.
        let old = service.call("GET", "/changes", query: [("since", "2")], session: session)
        #expect(old.status == 200)
        let entries = try #require(old.json["changes"] as? [[String: Any]])
        #expect(entries.count == 1 && entries[0]["revision"] as? Int == 3 && entries[0]["reload"] != nil)
        // A session carried past both at once (never read in between) has both revisions, no entries.
        let idle = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        service.install(ReloadMenus.menu(generation: 4))
        service.install(ReloadMenus.menu(generation: 5))
        #expect(Self.revision(service, idle) == 2)
        #expect(service.call("GET", "/changes", query: [("since", "0")], session: idle).status == 410)
        #expect(service.call("GET", "/changes", query: [("since", "2")], session: idle).status == 200)
    }
}

/// `--reload-entry-window`: the previous menu is kept that long after a reload, then freed, and
/// the feed answers `410` from before the reload; zero keeps none.
struct ReloadEntryWindowTests {
    /// Set by the service's timer thread, read by the test.
    private final class FreedFlag: Sendable {
        let value = Atomic(false)
        var isSet: Bool { value.load(ordering: .relaxed) }
    }

    @Test func withNoWindowThePreviousMenuIsNotKeptAndTheFeedIsGoneFromBeforeTheReload() throws {
        let service = MenuAPI(
            store: InMemorySessionStore(menu: ReloadMenus.menu(generation: 1)), reloadEntryWindow: .zero)
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        #expect(service.call("POST", "/groups/sides/toggle", session: session).status == 200)
        weak let oldMenu = service.menu.storage
        service.store.adopt(service.install(ReloadMenus.menu(generation: 2)))
        #expect(oldMenu == nil, "nothing keeps the old menu")
        #expect(service.call("GET", "/changes", query: [("since", "1")], session: session).status == 410)
        #expect(service.call("GET", "/changes", query: [("since", "2")], session: session).status == 200)
    }

    @Test func whenTheWindowEndsThePreviousMenuIsFreedAndTheFeedIsGoneFromBeforeTheReload() async throws {
        let service = MenuAPI(
            store: InMemorySessionStore(menu: ReloadMenus.menu(generation: 1)), reloadEntryWindow: .milliseconds(20))
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        #expect(service.call("POST", "/groups/sides/toggle", session: session).status == 200)
        weak let oldMenu = service.menu.storage
        let freed = FreedFlag()
        service.store.adopt(
            service.install(ReloadMenus.menu(generation: 2)) { freed.value.store(true, ordering: .relaxed) })
        // The timer runs on a Dispatch queue of its own: wait for it (bounded), without blocking the pool.
        for _ in 0 ..< 3_000 where !freed.isSet {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(freed.isSet, "the window's end was reported")
        #expect(oldMenu == nil, "the old menu is freed")
        #expect(service.call("GET", "/changes", query: [("since", "1")], session: session).status == 410)
    }
}
