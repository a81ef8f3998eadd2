// The tests' own oracle: the live tests' menu read by the test (not through MenuModel) and
// flattened naively.

import Foundation
import MenuTestSupport

/// The tests' menu (`LivePaths.menuConfig`) read by the test itself (not through MenuModel) and flattened naively.
package struct LiveMenuModel: Sendable {
    package struct Node: Sendable {
        package var id: String
        package var title: String
        package var depth: Int
        package var children: [Int]?  // nil for rows
        package var defaultExpanded: Bool
        package var attributes: [String: LiveJSON]?
    }

    package var nodes: [Node] = []
    package var topLevel: [Int] = []

    package static let menu: LiveMenuModel = {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: LivePaths.menuConfig))
            return LiveMenuModel(try JSONDecoder().decode(LiveJSON.self, from: data))
        } catch {
            fatalError("cannot read \(LivePaths.menuConfig): \(error)")
        }
    }()

    package init(_ document: LiveJSON) {
        topLevel = (document["items"]?.arrayValue ?? []).map { add($0, depth: 0) }
    }

    private mutating func add(_ item: LiveJSON, depth: Int) -> Int {
        let index = nodes.count
        let items = item["items"]?.arrayValue
        nodes.append(
            Node(
                id: item["id"]?.stringValue ?? "", title: item["title"]?.stringValue ?? "", depth: depth,
                children: items.map { _ in [] }, defaultExpanded: item["expanded"]?.boolValue ?? false,
                attributes: item["attributes"]?.objectValue))
        if let items {
            let children = items.map { add($0, depth: depth + 1) }
            nodes[index].children = children
        }
        return index
    }

    package func node(_ id: String) -> Int? { nodes.firstIndex { $0.id == id } }
    package var groupIDs: [String] { nodes.filter { $0.children != nil }.map(\.id) }

    /// One client's expansion state: the config's defaults plus that client's changes.
    package struct State: Sendable {
        package var expanded: [Bool]
    }

    package var defaultState: State { State(expanded: nodes.map(\.defaultExpanded)) }

    /// The leaves under `node`, at any depth (1 for a leaf).
    package func leafCount(of node: Int) -> Int {
        nodes[node].children.map { $0.reduce(0) { $0 + leafCount(of: $1) } } ?? 1
    }

    /// The visible rows under `state`, as the server should list them.
    package func rows(_ state: State) -> [LiveRow] {
        var rows: [LiveRow] = []
        func visit(_ node: Int, parent: String?, place: Int, of siblings: Int) {
            let n = nodes[node]
            let row = rows.count
            rows.append(
                LiveRow(
                    index: row, id: n.id, title: n.title, depth: n.depth, isGroup: n.children != nil,
                    isExpanded: n.children == nil ? nil : state.expanded[node],
                    childCount: n.children?.count, attributes: n.attributes, parentId: parent,
                    visibleDescendantCount: n.children == nil ? nil : 0, posInSet: place, setSize: siblings,
                    selectableCount: n.children == nil ? nil : leafCount(of: node)))
            if let children = n.children, state.expanded[node] {
                for (position, child) in children.enumerated() {
                    visit(child, parent: n.id, place: position + 1, of: children.count)
                }
                rows[row].visibleDescendantCount = rows.count - row - 1
            }
        }
        for (position, node) in topLevel.enumerated() {
            visit(node, parent: nil, place: position + 1, of: topLevel.count)
        }
        return rows
    }

    package func counts(_ state: State) -> (count: Int, leafCount: Int) {
        let rows = rows(state)
        return (rows.count, rows.filter { !$0.isGroup }.count)
    }

    /// Applies "set `id` to `expanded`" and returns what the server must answer.
    package func apply(_ id: String, expanded: Bool, to state: inout State) -> (index: Int?, change: LiveSplice?) {
        guard let node = node(id) else { return (nil, nil) }
        let before = rows(state)
        let wasExpanded = state.expanded[node]
        state.expanded[node] = expanded
        let after = rows(state)
        guard let index = after.firstIndex(where: { $0.id == id }) else { return (nil, nil) }
        if wasExpanded == expanded { return (index, LiveSplice(at: index + 1, inserted: 0, removed: 0)) }
        let delta = after.count - before.count
        return (index, LiveSplice(at: index + 1, inserted: max(delta, 0), removed: max(-delta, 0)))
    }
}
