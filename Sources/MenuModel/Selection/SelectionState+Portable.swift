/// A session's selection by id, independent of node positions: what a store writes out and reads
/// back, across restarts and reloads, and the compact form `GET /selection` answers. A leaf is
/// selected when `all` is, flipped once by each id in `toggled` that is it or one of its groups.
public struct PortableSelection: Sendable, Hashable, Codable {
    public var all: Bool
    /// In menu order when taken from a state; any order is accepted back.
    public var toggled: [String]

    public init(all: Bool = false, toggled: [String] = []) {
        self.all = all
        self.toggled = toggled
    }
}

extension SelectionState {
    /// This state by id: its base and its toggles' ids, in the order of the menu it belongs to. O(1).
    public var portable: PortableSelection { PortableSelection(all: base, toggled: toggleIDs) }

    /// The state `portable` describes, on `menu`. An id that names no node of `menu` is ignored
    /// and appended to `ignoredIDs`; an id given twice counts once. O(k log k) for k ids.
    public init(portable: PortableSelection, in menu: Menu, ignoredIDs: inout [String]) {
        base = portable.all
        var nodes = Set<Int32>()
        for id in portable.toggled {
            guard let node = menu.node(withID: id) else {
                ignoredIDs.append(id)
                continue
            }
            nodes.insert(Int32(node))
        }
        toggles = nodes.sorted().map { SelectionToggle(node: $0, end: Int32(menu.subtreeEnd(Int($0)))) }
        toggleIDs = toggles.map { menu.id(of: Int($0.node)) }
        rebuildEdges(in: menu)
    }

    /// This state (of the menu before a reload, which need not be kept) on `new`, by id: each
    /// toggle whose id `new` still has is kept, on that node; the ids of the others are appended
    /// to `dropped`. O(k log k).
    public func carried(to new: Menu, dropped: inout [String]) -> SelectionState {
        SelectionState(portable: portable, in: new, ignoredIDs: &dropped)
    }

    /// The selected leaves from the `offset`-th (0-based, in menu order), at most `limit` of them.
    /// O(k + log n + the nodes between the first and the last leaf given).
    public func selectedLeaves(in menu: Menu, offset: Int, limit: Int) -> [Menu.Node] {
        let leavesBefore = menu.storage.leavesBefore
        let leafCount = leavesBefore[menu.nodeCount + 1]
        guard limit > 0, offset >= 0 else { return [] }
        // The selected ranks, interval by interval, until `limit` of them past `offset`.
        var ranks: [Int32] = []
        var skip = Int32(clamping: offset)
        var start: Int32 = 0
        var state = base
        for bound in edges + [leafCount] {
            if state && bound > start {
                let length = bound - start
                if skip >= length {
                    skip -= length
                } else {
                    var rank = start + skip
                    skip = 0
                    while rank < bound && ranks.count < limit {
                        ranks.append(rank)
                        rank += 1
                    }
                    if ranks.count == limit { break }
                }
            }
            state.toggle()
            start = bound
        }
        // Rank to node: the leaf of rank r is the last position whose leavesBefore is r.
        var nodes: [Menu.Node] = []
        nodes.reserveCapacity(ranks.count)
        var position = 0
        for rank in ranks {
            if let previous = nodes.last, leavesBefore[previous + 1] == rank {
                position = previous + 1
                while menu.isGroup(position) { position += 1 }
            } else {
                position = leavesBefore.upperBound(rank) - 1
            }
            nodes.append(position)
        }
        return nodes
    }
}
