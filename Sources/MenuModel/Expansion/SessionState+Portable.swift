/// A session's state by id (its expansion and its selection), independent of node positions:
/// what a store writes out and reads back, across restarts and reloads. `marks` and `flips` are
/// in menu order when taken from a state; any order is accepted back.
public struct PortableState: Sendable, Hashable {
    /// A subtree set to one mode by a recursive change.
    public struct Mark: Sendable, Hashable {
        public var id: String
        public var mode: ExpansionMode
        public init(id: String, mode: ExpansionMode) {
            self.id = id
            self.mode = mode
        }
    }

    /// A group whose state differs from the one its mode gives it, with its state in the session.
    public struct Flip: Sendable, Hashable {
        public var id: String
        public var isExpanded: Bool
        public init(id: String, isExpanded: Bool) {
            self.id = id
            self.isExpanded = isExpanded
        }
    }

    public var base: ExpansionMode
    public var marks: [Mark]
    public var flips: [Flip]
    public var selection: PortableSelection

    public init(
        base: ExpansionMode = .default, marks: [Mark] = [], flips: [Flip] = [],
        selection: PortableSelection = PortableSelection()
    ) {
        self.base = base
        self.marks = marks
        self.flips = flips
        self.selection = selection
    }
}

extension SessionState {
    /// This state by id, read against `menu` (the menu it belongs to): the base, each mark with
    /// its mode, each flipped group with its state here. O(flips + marks).
    public func portable(in menu: Menu) -> PortableState {
        PortableState(
            base: base,
            marks: marks.map { PortableState.Mark(id: menu.id(of: Int($0.node)), mode: $0.mode) },
            flips: explicitStates { menu.isExpandedByDefault(Int($0)) }.map {
                PortableState.Flip(id: menu.id(of: Int($0.node)), isExpanded: $0.isExpanded)
            },
            selection: selection.portable)
    }

    /// The state `portable` describes, on `menu`. An id that names no group of `menu` (unknown, or
    /// a row) is ignored and appended to `ignoredIDs`, mark or flip alike; a flip whose state is
    /// the one its mode gives it here is no flip, and a mark whose mode is already in force at its
    /// parent no mark (both change nothing). A later duplicate of an id overrides an earlier one.
    /// O((k + j) · (d + log(k + j))) for k flips and j marks.
    public init(portable: PortableState, in menu: Menu, ignoredIDs: inout [String]) {
        func group(_ id: String) -> Int32? {
            guard let node = menu.node(withID: id), menu.isGroup(node) else {
                ignoredIDs.append(id)
                return nil
            }
            return Int32(node)
        }
        var marks: [Int32: ExpansionMode] = [:]
        for mark in portable.marks { if let node = group(mark.id) { marks[node] = mark.mode } }
        var flips: [Int32: Bool] = [:]
        for flip in portable.flips { if let node = group(flip.id) { flips[node] = flip.isExpanded } }
        self.init(
            base: portable.base,
            marks: marks.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
            explicit: flips.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, in: menu)
        selection = SelectionState(portable: portable.selection, in: menu, ignoredIDs: &ignoredIDs)
    }
}
