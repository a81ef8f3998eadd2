import DurableTestSupport
import Foundation
import MenuModel
import Testing

@testable import MenuSessions
@testable import MenuSessionsDurable

/// A selection is in the files (issue 28 §1): a restart brings back the leaves chosen at the
/// revision they were chosen at, from the journal and from a snapshot, beside the expansion.
@Suite("Durable store: selection")
struct DurableSelectionTests {
    static let config = #"""
        {"items": [
          {"id": "a", "title": "A", "expanded": true, "items": [
            {"id": "a1", "title": "A1"}, {"id": "a2", "title": "A2"},
            {"id": "b", "title": "B", "items": [{"id": "b1", "title": "B1"}, {"id": "b2", "title": "B2"}]}]},
          {"id": "c", "title": "C", "items": [{"id": "c1", "title": "C1"}]}
        ]}
        """#

    @Test(arguments: [false, true])
    func aRestartBringsBackTheSelectionAndTheExpansion(compactFirst: Bool) throws {
        let menu = try Menu(jsonData: Data(Self.config.utf8))
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        var store = try DurableSessionStore(directory: directory.path, menu: menu, fsync: .no)
        let everything = try store.create()
        _ = try store.apply(.selectAll(true, excludedIDs: ["b2"]), to: everything)
        _ = try store.apply(.toggle(groupID: "c"), to: everything)
        let some = try store.create()
        _ = try store.apply(.select(nodeID: "b", selected: true), to: some)
        _ = try store.apply(.select(nodeID: "b1", selected: false), to: some)
        let cleared = try store.create()
        _ = try store.apply(.select(nodeID: "a1", selected: true), to: cleared)
        _ = try store.apply(.selectAll(false), to: cleared)
        let before = try [everything, some, cleared].map { try store.snapshot(of: $0) }
        if compactFirst { try store.compactNow() }
        store.close()
        store = try DurableSessionStore(directory: directory.path, menu: menu, fsync: .no)
        defer { store.close() }
        #expect(store.recovery.repairs.isEmpty)
        let after = try [everything, some, cleared].map { try store.snapshot(of: $0) }
        #expect(after == before)
        #expect(after[0].state.selection.portable == PortableSelection(all: true, toggled: ["b2"]))
        #expect(after[1].state.selection.portable == PortableSelection(all: false, toggled: ["b", "b1"]))
        #expect(after[2].state.selection.portable == PortableSelection() && after[2].revision == 2)
    }
}
