import DurableTestSupport
import Foundation
import MenuModel
import NaiveReference
import Testing

@testable import MenuSessions
@testable import MenuSessionsDurable

/// Bulk commands (expand or collapse all, recursive sets) and sessions created holding a state,
/// in the durable store: after a restart every session holds what the in-memory store holds
/// after the same commands, at the same revision, and a bulk command costs the journal one
/// record the size of the state it leaves, never one per group it affected.
@Suite("Durable: bulk commands and states survive restarts")
struct DurableBulkTests {
    /// The two stores over one generated menu, with the same change limit, and the session pairs.
    struct Pair {
        let menu: Menu
        let memory: InMemorySessionStore
        var durable: DurableSessionStore
        /// (durable id, in-memory id) of each live session.
        var sessions: [(durable: SessionID, memory: SessionID)] = []
        let limit: Int
        let directory: DurableTemporaryDirectory

        init(menu: Menu, limit: Int, directory: DurableTemporaryDirectory) throws {
            self.menu = menu
            self.limit = limit
            self.directory = directory
            memory = InMemorySessionStore(menu: menu, maxChangedGroups: limit)
            durable = try Self.open(directory, menu: menu, limit: limit)
        }

        static func open(_ directory: DurableTemporaryDirectory, menu: Menu, limit: Int) throws -> DurableSessionStore {
            try DurableSessionStore(directory: directory.path, menu: menu, fsync: .no, maxChangedGroups: limit)
        }

        mutating func reopen() throws {
            durable.close()
            durable = try Self.open(directory, menu: menu, limit: limit)
            #expect(durable.recovery.repairs.isEmpty && durable.recovery.skippedGroupChanges == 0)
        }

        /// Every session holds the same state (by id) at the same revision in both stores.
        func expectSame(_ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(durable.count == sessions.count, "\(label)", sourceLocation: sourceLocation)
            for pair in sessions {
                let stored = try durable.snapshot(of: pair.durable)
                let reference = try memory.snapshot(of: pair.memory)
                #expect(
                    stored.state.portable(in: menu) == reference.state.portable(in: menu), "\(label)",
                    sourceLocation: sourceLocation)
                #expect(stored.revision == reference.revision, "\(label)", sourceLocation: sourceLocation)
            }
        }
    }

    /// A random state by id: any base, up to three marks and five flips, an unknown id now and then.
    static func randomPortable(groups: [String], using rng: inout SplitMix64) -> PortableState {
        let modes = ExpansionMode.allCases
        var state = PortableState(base: modes.randomElement(using: &rng)!)
        for _ in 0 ..< Int.random(in: 0 ... 3, using: &rng) {
            state.marks.append(.init(id: groups.randomElement(using: &rng)!, mode: modes.randomElement(using: &rng)!))
        }
        for _ in 0 ..< Int.random(in: 0 ... 5, using: &rng) {
            state.flips.append(
                .init(
                    id: Int.random(in: 0 ..< 20, using: &rng) == 0
                        ? "no-such-group" : groups.randomElement(using: &rng)!,
                    isExpanded: Bool.random(using: &rng)))
        }
        return state
    }

    /// A random command on the menu's groups and nodes, bulk ones about half the time.
    static func randomCommand(groups: [String], nodes: [String], using rng: inout SplitMix64) -> SessionCommand {
        let group = groups.randomElement(using: &rng)!
        switch Int.random(in: 0 ..< 10, using: &rng) {
        case 0, 1: return .toggle(groupID: group)
        case 2: return .set(groupID: group, isExpanded: Bool.random(using: &rng))
        case 3: return .reveal(nodeID: nodes.randomElement(using: &rng)!)
        case 4, 5, 6: return .setSubtree(groupID: group, isExpanded: Bool.random(using: &rng))
        default: return .setAll(ExpansionMode.allCases.randomElement(using: &rng)!)
        }
    }

    @Test(
        "a seeded mix of expand-all, collapse-all, reset, recursive sets, toggles, reveals and states: restarts give the in-memory store's states and revisions",
        arguments: [UInt64(1), 2, 3])
    func restartsMatchTheInMemoryStore(seed: UInt64) throws {
        var rng = SplitMix64(state: seed)
        let menu = try makeMenu(randomTree(nodes: 300, maxDepth: 5, using: &rng))
        let groups = menu.nodes.filter { menu.isGroup($0) }.map { menu.id(of: $0) }
        let nodes = menu.nodes.map { menu.id(of: $0) }
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        var pair = try Pair(menu: menu, limit: 8, directory: directory)
        defer { pair.durable.close() }
        var refusals = 0
        for step in 0 ..< 600 {
            let choice = Int.random(in: 0 ..< 100, using: &rng)
            if choice < 4 || pair.sessions.isEmpty {
                pair.sessions.append((try pair.durable.create(), try pair.memory.create()))
            } else if choice < 10 {
                var ignored: [String] = []
                let state = SessionState(
                    portable: Self.randomPortable(groups: groups, using: &rng), in: menu, ignoredIDs: &ignored)
                let stored = Result { () throws(SessionStoreError) in
                    try pair.durable.create(in: pair.durable.currentMenu, state: state)
                }
                let reference = Result { () throws(SessionStoreError) in
                    try pair.memory.create(in: pair.memory.currentMenu, state: state)
                }
                #expect(stored.error == reference.error, "step \(step)")
                if case .success(let durableID) = stored, case .success(let memoryID) = reference {
                    pair.sessions.append((durableID, memoryID))
                }
            } else if choice < 14 {
                let command = Self.randomCommand(groups: groups, nodes: nodes, using: &rng)
                let stored = try? pair.durable.apply(command, to: nil)
                let reference = try? pair.memory.apply(command, to: nil)
                #expect(stored?.revision == reference?.revision, "step \(step): \(command)")
                if let stored, let reference { pair.sessions.append((stored.sessionID, reference.sessionID)) }
            } else if choice < 17 {
                let index = Int.random(in: 0 ..< pair.sessions.count, using: &rng)
                try pair.durable.delete(pair.sessions[index].durable)
                try pair.memory.delete(pair.sessions[index].memory)
                pair.sessions.remove(at: index)
            } else {
                let target = pair.sessions.randomElement(using: &rng)!
                let command = Self.randomCommand(groups: groups, nodes: nodes, using: &rng)
                let stored = Result { () throws(SessionStoreError) in
                    try pair.durable.apply(command, to: target.durable).revision
                }
                let reference = Result { () throws(SessionStoreError) in
                    try pair.memory.apply(command, to: target.memory).revision
                }
                #expect(stored == reference, "step \(step): \(command)")
                if case .failure(.tooManyChanges) = reference { refusals += 1 }
            }
            if step % 150 == 149 { try pair.durable.compactNow() }
            if step % 200 == 199 { try pair.reopen() }
        }
        #expect(refusals > 0, "the change limit was never reached")
        try pair.expectSame("before the restart")
        try pair.reopen()
        try pair.expectSame("after a restart from the journal")
        try pair.durable.compactNow()
        try pair.reopen()
        try pair.expectSame("after a restart from a fresh snapshot")
    }
}

extension DurableBulkTests {
    /// The journal's size now (the newest journal file).
    static func journalBytes(_ directory: DurableTemporaryDirectory) throws -> Int {
        try durableRecordOffsets(directory.file(try #require(directory.journalNames.last))).size
    }

    @Test(
        "expand-all, collapse-all and a recursive set of a 50,000-node menu each journal one record of under 200 bytes (a repeat nothing), and restart to the same table"
    )
    func bulkCommandsOfALargeMenuJournalAFewBytes() throws {
        var rng = SplitMix64(state: 7)
        let menu = try makeMenu(randomTree(nodes: 50_000, maxDepth: 8, width: 0 ... 8, using: &rng))
        let groups = menu.nodes.filter { menu.isGroup($0) }
        #expect(groups.count > 10_000)
        let top = try #require(groups.max { menu.subtreeEnd($0) - $0 < menu.subtreeEnd($1) - $1 })
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let store = try durableOpen(directory, menu: menu)
        let id = try store.create()
        var sizes: [Int] = []
        let subtree = SessionCommand.setSubtree(groupID: menu.id(of: top), isExpanded: true)
        for command: SessionCommand in [.setAll(.expanded), .setAll(.collapsed), subtree, subtree] {
            let before = try Self.journalBytes(directory)
            _ = try store.apply(command, to: id)
            sizes.append(try Self.journalBytes(directory) - before)
        }
        // kind, time, session id, revision, base, entry counts (50 bytes framed); the mark adds its id.
        // Again: no change, no revision, nothing written.
        #expect(sizes[0] == 50 && sizes[1] == 50 && sizes[2] < 200 && sizes[3] == 0, "\(sizes)")
        let expected = try store.snapshot(of: id)
        let shown = FlattenedView(menu: menu, state: expected.state).count
        store.close()
        let reopened = try durableOpen(directory, menu: menu)
        defer { reopened.close() }
        let restored = try reopened.snapshot(of: id)
        #expect(restored.state.portable(in: menu) == expected.state.portable(in: menu) && restored.revision == 3)
        #expect(
            FlattenedView(menu: menu, state: restored.state).count == shown && restored.state.changedGroupCount == 1)
    }

    /// Base collapsed, b's subtree expanded, d flipped open, and an id the menu does not have.
    static let portable = PortableState(
        base: .collapsed, marks: [.init(id: "b", mode: .expanded)],
        flips: [.init(id: "ag", isExpanded: true), .init(id: "zz", isExpanded: true)])

    @Test(
        "a session created holding a base, marks and flips survives a restart from the journal and from a snapshot, at revision 0"
    )
    func aCreatedStateSurvivesRestarts() throws {
        let menu = DurableFixtures.menu()
        var ignored: [String] = []
        let state = SessionState(portable: Self.portable, in: menu, ignoredIDs: &ignored)
        #expect(ignored == ["zz"] && state.markCount == 1)
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory, menu: menu)
        let id = try first.create(in: first.currentMenu, state: state)
        let plain = try first.create(in: first.currentMenu, state: SessionState())
        first.close()
        for round in ["journal", "snapshot"] {
            let store = try durableOpen(directory, menu: menu)
            #expect(try store.snapshot(of: id) == SessionSnapshot(state: state, revision: 0), "\(round)")
            #expect(try store.snapshot(of: plain) == SessionSnapshot(state: SessionState(), revision: 0), "\(round)")
            try store.compactNow()
            store.close()
        }
    }

    @Test(
        "a compaction writes base and marks: after a restart from the snapshot alone each session holds them, flips under marks included"
    )
    func compactionKeepsBaseAndMarks() throws {
        let menu = DurableFixtures.menu()
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = try durableOpen(directory, menu: menu)
        let marked = try first.create()
        _ = try first.apply(.setAll(.expanded), to: marked)
        _ = try first.apply(.setSubtree(groupID: "b", isExpanded: false), to: marked)
        _ = try first.apply(.toggle(groupID: "bg"), to: marked)  // open inside the collapsed subtree
        _ = try first.apply(.toggle(groupID: "c"), to: marked)  // closed against the base
        let flat = try first.create()
        _ = try first.apply(.toggle(groupID: "c"), to: flat)
        let expected = [marked: try first.snapshot(of: marked), flat: try first.snapshot(of: flat)]
        #expect(
            expected[marked]!.revision == 4 && expected[marked]!.state.markCount == 1
                && expected[marked]!.state.baseMode == .expanded)
        try first.compactNow()
        first.close()
        // The snapshot holds one record per session: the new kind only for the session with a base and marks.
        let snapshot = Array(try Data(contentsOf: URL(fileURLWithPath: directory.file("snapshot"))))
        let kinds = durablePayloads(snapshot).payloads.map { $0.first! }
        #expect(
            kinds.sorted()
                == [DurableRecord.Kind.fileHeader, .snapshotEnd, .sessionAtRevision, .sessionState].map(\.rawValue)
                .sorted())
        let journal = try Self.journalBytes(directory)
        #expect(directory.journalNames.count == 1 && journal < 100)  // a fresh journal: its header only
        let reopened = try durableOpen(directory, menu: menu)
        defer { reopened.close() }
        for (id, snapshot) in expected { #expect(try reopened.snapshot(of: id) == snapshot) }
    }

    @Test("a state or a recursive set past the change limit is refused (tooManyChanges) and journals nothing")
    func statesPastTheLimitAreRefused() throws {
        let menu = DurableFixtures.menu()
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let store = try DurableSessionStore(directory: directory.path, menu: menu, fsync: .no, maxChangedGroups: 2)
        defer { store.close() }
        var ignored: [String] = []
        var three = Self.portable
        three.flips.append(.init(id: "c", isExpanded: true))
        let big = SessionState(portable: three, in: menu, ignoredIDs: &ignored)
        #expect(big.changedGroupCount == 3)
        let id = try store.create()
        _ = try store.apply(.toggle(groupID: "c"), to: id)
        _ = try store.apply(.toggle(groupID: "a"), to: id)
        let before = try Self.journalBytes(directory)
        #expect(durableError { try store.create(in: store.currentMenu, state: big) } == .tooManyChanges(limit: 2))
        // b's subtree holds neither flip: a third entry.
        #expect(
            durableError { try store.apply(.setSubtree(groupID: "b", isExpanded: true), to: id) }
                == .tooManyChanges(limit: 2))
        #expect(try Self.journalBytes(directory) == before && store.count == 1)
        #expect(try store.snapshot(of: id).revision == 2)
        // One that clears what it replaces goes through: collapse-all leaves no entry.
        #expect(try store.apply(.setAll(.collapsed), to: id).state.changedGroupCount == 0)
    }
}

extension Result {
    /// The failure, nil for a success.
    var error: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
