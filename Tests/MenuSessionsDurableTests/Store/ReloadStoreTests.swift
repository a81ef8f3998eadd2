import DurableTestSupport
import Foundation
import HTTPCore
import MenuServiceTestSupport
import MenuTestSupport
import Testing

@testable import MenuModel
@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

/// The two stores, made fresh for each test, on generation 1 of ``ReloadMenus``.
enum ReloadStoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inMemory, durable
    var testDescription: String { rawValue }

    func make(_ menu: MenuGeneration, directory: DurableTemporaryDirectory) throws -> any SessionStore {
        switch self {
        case .inMemory: InMemorySessionStore(menu: menu)
        case .durable: try DurableSessionStore(directory: directory.path, menu: menu, fsync: .no)
        }
    }
}

/// A store with a menu service over it, and every generation installed so far.
private struct Reloading {
    let store: any SessionStore
    let service: MenuAPI
    var menus: [Int: Menu] = [1: ReloadMenus.menu(generation: 1)]
    var generation = 1

    init(_ kind: ReloadStoreKind, directory: DurableTemporaryDirectory) throws {
        store = try kind.make(MenuGeneration(menus[1]!), directory: directory)
        service = MenuAPI(store: store)
    }

    /// Installs the next generation; carries sessions over eagerly only when `adopt`.
    @discardableResult
    mutating func reload(adopt: Bool = true) -> SessionRebaseReport {
        generation += 1
        menus[generation] = ReloadMenus.menu(generation: generation)
        let installed = service.install(menus[generation]!)
        return adopt ? store.adopt(installed) : SessionRebaseReport()
    }

    /// The session's expansion of every group of the current menu, by id.
    func expansion(of id: SessionID) throws -> [String: Bool] {
        let menu = service.menu
        let view = FlattenedView(menu: menu, state: try store.state(of: id, in: service.current.generation))
        var result: [String: Bool] = [:]
        for node in menu.nodes where menu.isGroup(node) { result[menu.id(of: node)] = view.isExpanded(node) }
        return result
    }

    func expected(_ expectation: ReloadExpectation) -> [String: Bool] {
        let view = expectation.view(at: generation, menus: menus)
        var result: [String: Bool] = [:]
        let menu = menus[generation]!
        for node in menu.nodes where menu.isGroup(node) { result[menu.id(of: node)] = view.isExpanded(node) }
        return result
    }

    func set(_ group: String, _ isExpanded: Bool, on id: SessionID, _ expectation: inout ReloadExpectation) throws {
        _ = try store.apply(.set(groupID: group, isExpanded: isExpanded), to: id, in: service.current.generation)
        expectation.acknowledge(group, isExpanded: isExpanded, generation: generation)
    }
}

@Suite("Reload: sessions are carried over to a new menu by id, in both stores")
struct ReloadStoreTests {
    @Test(
        "a changed group keeps its choice by id; a group gone or turned into a row is dropped; a changed default keeps the explicit choice",
        arguments: ReloadStoreKind.allCases)
    func changedGroupsAreCarriedOverByID(kind: ReloadStoreKind) throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        var reloading = try Reloading(kind, directory: directory)
        let id = try reloading.store.create(in: reloading.service.current.generation)
        var expectation = ReloadExpectation()
        // Generation 1: seasonal exists, drinks is a group, mains open by default, specials on top.
        try reloading.set("seasonal", true, on: id, &expectation)
        try reloading.set("drinks", true, on: id, &expectation)
        try reloading.set("specials", true, on: id, &expectation)
        try reloading.set("sides", true, on: id, &expectation)
        try reloading.set("mains", false, on: id, &expectation)
        try reloading.set("desserts", false, on: id, &expectation)
        reloading.reload()  // 2: seasonal gone, specials moved under mains, mains collapsed by default
        let after2 = try reloading.expansion(of: id)
        #expect(after2 == reloading.expected(expectation))
        #expect(after2["seasonal"] == nil)
        #expect(after2["specials"] == true, "a moved group keeps its choice")
        #expect(after2["mains"] == false, "the choice now equals the default: still collapsed")
        #expect(after2["desserts"] == false && after2["sides"] == true && after2["drinks"] == true)
        reloading.reload()  // 3: seasonal back (without the session's choice), drinks a row, mains open by default
        let after3 = try reloading.expansion(of: id)
        #expect(after3 == reloading.expected(expectation))
        #expect(after3["seasonal"] == false, "a group dropped once does not come back expanded")
        #expect(after3["drinks"] == nil)
        #expect(after3["mains"] == true, "a choice equal to an earlier default follows the new default")
        #expect(after3["specials"] == true && after3["sides"] == true && after3["desserts"] == false)
    }

    @Test(
        "a session not used across several reloads is carried over on its next use, as if at each one",
        arguments: ReloadStoreKind.allCases)
    func aSessionIsRebasedLazilyThroughSeveralReloads(kind: ReloadStoreKind) throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        var eager = try Reloading(kind, directory: directory)
        let lazyDirectory = DurableTemporaryDirectory()
        defer { lazyDirectory.remove() }
        var lazy = try Reloading(kind, directory: lazyDirectory)
        let eagerID = try eager.store.create(in: eager.service.current.generation)
        let lazyID = try lazy.store.create(in: lazy.service.current.generation)
        var expectation = ReloadExpectation()
        var unused = ReloadExpectation()
        for (group, isExpanded) in [
            ("seasonal", true), ("drinks", true), ("specials", true), ("mains-noodles", true), ("desserts", false)
        ] {
            try eager.set(group, isExpanded, on: eagerID, &expectation)
            try lazy.set(group, isExpanded, on: lazyID, &unused)
        }
        for _ in 0 ..< 5 {
            eager.reload()
            lazy.reload(adopt: false)
            #expect(try eager.expansion(of: eagerID) == eager.expected(expectation))
        }
        #expect(try lazy.expansion(of: lazyID) == eager.expected(expectation))
    }

    @Test(
        "a request on the menu before a reload gets .menuChanged for a session already on the new one, and nothing changes",
        arguments: ReloadStoreKind.allCases)
    func aSessionOnANewerMenuRefusesAnOlderOne(kind: ReloadStoreKind) throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        var reloading = try Reloading(kind, directory: directory)
        let old = reloading.service.current.generation
        let id = try reloading.store.create(in: old)
        reloading.reload()
        #expect(throws: SessionStoreError.menuChanged) { try reloading.store.state(of: id, in: old) }
        #expect(throws: SessionStoreError.menuChanged) {
            try reloading.store.apply(.set(groupID: "sides", isExpanded: true), to: id, in: old)
        }
        #expect(try reloading.expansion(of: id)["sides"] == false)
        // Through the service the request simply runs on the current menu.
        let response = reloading.service.call(
            "PUT", "/groups/sides/expansion", session: id.text, body: #"{"isExpanded":true}"#)
        #expect(response.status == 200)
        #expect(response.json["version"] as? String == reloading.menus[2]!.version)
        #expect(try reloading.expansion(of: id)["sides"] == true)
    }

    @Test(
        "once no request holds it the old menu is freed, and once every session is carried over so is the old epoch",
        arguments: ReloadStoreKind.allCases)
    func theOldMenuAndEpochAreFreed(kind: ReloadStoreKind) throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        var reloading = try Reloading(kind, directory: directory)
        var sessions: [SessionID] = []
        for index in 0 ..< 200 {
            let id = try reloading.store.create(in: reloading.service.current.generation)
            _ = try reloading.store.apply(
                .set(groupID: ReloadMenus.groupIDs[index % 8], isExpanded: true), to: id,
                in: reloading.service.current.generation)
            sessions.append(id)
        }
        weak let oldServed = reloading.service.current
        weak let oldMenu = reloading.service.menu.storage
        weak let oldEpoch = reloading.service.current.generation.epoch
        let report = reloading.reload(adopt: false)
        reloading.menus[1] = nil  // the test's own reference
        #expect(report.rebased == 0)
        #expect(oldServed == nil, "the service no longer holds the old menu")
        #expect(oldEpoch != nil, "sessions not yet carried over keep the old epoch (and with it only the translation)")
        let adopted = reloading.store.adopt(reloading.service.current.generation)
        #expect(adopted.rebased == sessions.count)
        #expect(adopted.remaining == 0)
        #expect(oldEpoch == nil, "every session is on the new menu: nothing holds the old epoch")
        if reloading.store.recordsReloads {
            #expect(oldMenu != nil, "the newest epoch keeps the menu before it, for the reload's splices")
            reloading.reload()
        }
        #expect(oldMenu == nil, "nothing holds the old menu's nodes")
    }
}
