import DurableTestSupport
import Foundation
import MenuModel
import MenuTestSupport
import Testing

@testable import MenuSessions
@testable import MenuSessionsDurable

/// Bulk states across the store's harder paths: a write whose journal record the caller gave up
/// on (the undo puts back the state before), and menu reloads (the carry-over and the snapshot
/// after it keep base and marks).
@Suite("Durable: bulk states through abandoned writes and reloads")
struct DurableBulkRecoveryTests {
    /// Opens a store that gives up on the disk after 300 ms, flushing every write.
    static func open(_ directory: DurableTemporaryDirectory) throws -> DurableSessionStore {
        try DurableSessionStore(
            directory: directory.path, menu: DurableFixtures.menu(), fsync: .always, storeTimeout: .milliseconds(300))
    }

    /// Runs `write` while the disk's flushes stall: it must answer `.unavailable`, leave `id` as it
    /// was, and, once the flush goes through, leave it so after a restart too.
    static func expectUndone(
        _ directory: DurableTemporaryDirectory, _ id: SessionID, _ label: String,
        _ write: (DurableSessionStore) throws -> Void
    ) throws {
        let store = try open(directory)
        let before = try store.snapshot(of: id)
        DurableFaults.stall(.flush, in: directory.path)
        #expect(durableIsUnavailable(durableError { try write(store) }), "\(label)")
        #expect(
            DurableFaults.stalledCalls(in: directory.path) > 0, "\(label): the record reached the file, its flush waits"
        )
        #expect(try store.snapshot(of: id) == before, "\(label)")
        DurableFaults.release(.flush, in: directory.path)
        store.close()
        let reopened = try open(directory)
        defer { reopened.close() }
        #expect(try reopened.snapshot(of: id) == before, "\(label): after a restart")
    }

    @Test(
        "an expand-all, a recursive set and a delete that reach the journal after their caller gave up are undone: the state and revision before come back after a restart"
    )
    func abandonedBulkWritesAreUndone() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        defer { DurableFaults.clear(in: directory.path) }
        let store = try Self.open(directory)
        let id = try store.create()
        _ = try store.apply(.setAll(.collapsed), to: id)
        _ = try store.apply(.setSubtree(groupID: "b", isExpanded: true), to: id)
        _ = try store.apply(.toggle(groupID: "bg"), to: id)
        #expect(try store.snapshot(of: id).revision == 3 && store.snapshot(of: id).state.markCount == 1)
        store.close()
        try Self.expectUndone(directory, id, "expand-all") { _ = try $0.apply(.setAll(.expanded), to: id) }
        try Self.expectUndone(directory, id, "recursive set") {
            _ = try $0.apply(.setSubtree(groupID: "b", isExpanded: false), to: id)
        }
        try Self.expectUndone(directory, id, "delete") { try $0.delete(id) }
        // Each undo is a state record of its own in the journal: three writes, three undos.
        var states = 0
        for name in directory.journalNames {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: directory.file(name))))
            for offset in try durableRecordOffsets(directory.file(name)).offsets {
                if case (.state(id, _, _, _, _, _), _)? = DurableRecord.frame(in: bytes, at: offset).flatMap(
                    DurableRecord.decodeEvent)
                {
                    states += 1
                }
            }
        }
        #expect(states == 2 + 2 + 2 + 1)  // collapse-all and the set, then a write and its undo each, the delete's undo
    }

    /// The two stores on one menu generation, with their session pairs.
    struct Stores {
        var generation: MenuGeneration
        var memoryGeneration: MenuGeneration
        let memory: InMemorySessionStore
        var durable: DurableSessionStore
        var pairs: [(durable: SessionID, memory: SessionID)] = []

        func expectSame(_ label: String) throws {
            for pair in pairs {
                let stored = try durable.snapshot(of: pair.durable, in: generation)
                let reference = try memory.snapshot(of: pair.memory, in: memoryGeneration)
                #expect(
                    stored.state.portable(in: generation.menu) == reference.state.portable(in: memoryGeneration.menu),
                    "\(label)")
                #expect(stored.revision == reference.revision, "\(label)")
            }
        }

        mutating func apply(_ command: SessionCommand, to index: Int) throws {
            _ = try durable.apply(command, to: pairs[index].durable, in: generation)
            _ = try memory.apply(command, to: pairs[index].memory, in: memoryGeneration)
        }

        /// Both stores adopt menu generation `k` of ``ReloadMenus``.
        mutating func reload(to k: Int) {
            generation = generation.succeeded(by: ReloadMenus.menu(generation: k))
            memoryGeneration = memoryGeneration.succeeded(by: ReloadMenus.menu(generation: k))
            durable.adopt(generation)
            memory.adopt(memoryGeneration)
        }

        /// Closes the durable store and opens it again on its current menu.
        mutating func restart(_ directory: DurableTemporaryDirectory) throws {
            durable.close()
            generation = MenuGeneration(generation.menu)
            durable = try DurableSessionStore(directory: directory.path, menu: generation, fsync: .no)
        }
    }

    @Test(
        "sessions with a base, marks and flips carried over by reloads keep them through the snapshot after each reload and a restart"
    )
    func reloadsKeepBaseAndMarksAcrossRestarts() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let first = MenuGeneration(ReloadMenus.menu(generation: 1))
        var stores = Stores(
            generation: first, memoryGeneration: MenuGeneration(first.menu),
            memory: InMemorySessionStore(menu: first.menu),
            durable: try DurableSessionStore(directory: directory.path, menu: first, fsync: .no))
        defer { stores.durable.close() }
        stores.pairs.append(
            (try stores.durable.create(in: stores.generation), try stores.memory.create(in: stores.memoryGeneration)))
        try stores.apply(.setAll(.collapsed), to: 0)
        try stores.apply(.setSubtree(groupID: "mains", isExpanded: true), to: 0)
        try stores.apply(.toggle(groupID: "mains-noodles"), to: 0)
        try stores.apply(.set(groupID: "sides", isExpanded: true), to: 0)
        var ignored: [String] = []
        let portable = PortableState(
            base: .expanded, marks: [.init(id: "desserts", mode: .collapsed)],
            flips: [.init(id: "drinks", isExpanded: false), .init(id: "desserts-cakes", isExpanded: true)])
        let state = SessionState(portable: portable, in: first.menu, ignoredIDs: &ignored)
        stores.pairs.append(
            (
                try stores.durable.create(in: stores.generation, state: state),
                try stores.memory.create(in: stores.memoryGeneration, state: state)
            ))
        try stores.expectSame("generation 1")

        stores.reload(to: 2)  // specials moves under mains, mains is collapsed by default
        try stores.expectSame("generation 2")
        try stores.apply(.toggle(groupID: "specials"), to: 0)
        try stores.apply(.setSubtree(groupID: "desserts", isExpanded: true), to: 1)
        try stores.restart(directory)
        try stores.expectSame("generation 2, restarted")

        stores.reload(to: 3)  // drinks becomes a row: its flip is dropped
        try stores.expectSame("generation 3")
        try stores.restart(directory)
        #expect(stores.durable.recovery.skippedGroupChanges == 0)
        try stores.expectSame("generation 3, restarted")
        #expect(try stores.durable.snapshot(of: stores.pairs[0].durable).state.markCount == 1)
        #expect(try stores.durable.snapshot(of: stores.pairs[1].durable).state.baseMode == .expanded)
    }
}
