import TimeZoneRules

/// The immutable menu: a tree of groups and rows, frozen after validation and shared read-only
/// by every thread without locks.
///
/// Layout: struct-of-arrays in preorder. Position 0 is the implicit root (never a row); positions
/// `1...nodeCount` are the config's nodes in document order, so a node's subtree is the contiguous
/// range `node ..< subtreeEnd(node)`. Alongside the tree it keeps, for the menu's *default*
/// expansion, each node's visible size and the visible size of its left siblings, which
/// ``FlattenedView`` combines with a session's sparse ``SessionState`` overlay.
/// Lookups by position are O(1); ``node(withID:)`` is one hash lookup.
public struct Menu: Sendable {
    /// A position in the menu's preorder (1...nodeCount); stable for the life of a `Menu`.
    public typealias Node = Int

    @usableFromInline let storage: Storage

    /// The menu's title, if the config gives one.
    public var title: String? { storage.title }
    /// The string attributes the config marks `searchable`: search reads them beside the titles.
    public var searchableAttributes: [String] { storage.searchable }
    /// An opaque content hash: equal configs give equal versions; any change gives a new one.
    public var version: String { storage.version }
    /// Groups and rows in the menu, not counting the implicit root.
    public var nodeCount: Int { storage.ids.count - 1 }
    /// The deepest node's depth plus one (0 for an empty menu).
    public var height: Int { storage.height }
    /// Every node, in preorder.
    public var nodes: Range<Node> { 1 ..< nodeCount + 1 }

    /// One hash of the id and typically one probe (``IDIndex``).
    public func node(withID id: String) -> Node? { storage.idIndex.position(of: id, ids: storage.ids).map(Int.init) }
    public func id(of node: Node) -> String { storage.ids[node] }
    /// The node's title in the default locale (the only one of a menu without locales).
    public func title(of node: Node) -> String { storage.titles[node] }
    /// The node's title in `locales[locale]`; a node whose config gives no title in that locale
    /// has its default-locale title there. O(1).
    ///
    /// - Precondition: `localeIndices` contains `locale`.
    public func title(of node: Node, locale: Int) -> String {
        locale == 0 ? storage.titles[node] : storage.otherTitles[locale - 1][node]
    }
    /// The menu's own title in `locales[locale]` (the default locale's when the config gives none there).
    public func title(locale: Int) -> String? {
        locale == 0 ? storage.title : storage.otherRootTitles[locale - 1]
    }
    /// The BCP 47 tags the menu's titles are in, the default first, as the config spells them;
    /// empty for a menu whose config names no `defaultLocale` (its titles are in no stated language).
    public var locales: [String] { storage.locales }
    /// The locale every title has (`locales[0]`); nil for a menu without locales.
    public var defaultLocale: String? { storage.locales.first }
    /// Every index ``title(of:locale:)`` takes: `locales.indices`, or `0 ..< 1` (the one title of
    /// each node) for a menu without locales.
    public var localeIndices: Range<Int> { 0 ..< max(1, storage.locales.count) }
    /// The zone the config's `timeZone` names: the clock of every node's opening hours. nil when
    /// the config gives none (then no node has hours).
    public var timeZone: ZoneRules? { storage.timeZone }
    /// The node's own `hours` and `exceptions`; nil when its config gives neither (its groups'
    /// hours may still apply). One hash lookup.
    public func openingHours(of node: Node) -> OpeningHours? { storage.openingHours[node] }
    /// The group's `minSelect` and `maxSelect`; nil when its config gives neither. One hash lookup.
    public func selectionRule(of node: Node) -> SelectionRule? { storage.selectionRules[node] }
    /// The groups whose config gives `minSelect` or `maxSelect`, in preorder.
    public var ruledGroups: [Node] { storage.ruledGroups }
    /// The nodes whose config gives `hours` or `exceptions`, in preorder.
    public var scheduledNodes: [Node] { storage.scheduledNodes }
    /// 0 for a top-level node.
    public func depth(of node: Node) -> Int { Int(storage.records[node].depth) }
    public func isGroup(_ node: Node) -> Bool { storage.records[node].flags & Storage.groupFlag != 0 }
    public func isExpandedByDefault(_ node: Node) -> Bool { storage.records[node].flags & Storage.expandedFlag != 0 }
    /// Direct children (0 for a row or an empty group).
    public func childCount(of node: Node) -> Int { Int(storage.records[node].childCount) }
    /// The enclosing group, or nil for a top-level node.
    public func parent(of node: Node) -> Node? {
        let parent = Int(storage.records[node].parent)
        return parent == 0 ? nil : parent
    }
    public func children(of node: Node) -> [Node] {
        let first = Int(storage.records[node].firstChildSlot)
        return storage.children[first ..< first + Int(storage.records[node].childCount)].map { Int($0.node) }
    }
    /// One past the last node of `node`'s subtree, in preorder.
    public func subtreeEnd(_ node: Node) -> Node { Int(storage.records[node].subtreeEnd) }
    /// The rows (not groups) of `node`'s subtree, itself included: 1 for a row. O(1).
    public func leafCount(of node: Node) -> Int {
        Int(storage.leavesBefore[subtreeEnd(node)] - storage.leavesBefore[node])
    }
    /// The node's attributes exactly as the config gives them, or nil when it gives none.
    public func attributes(of node: Node) -> [String: JSONValue]? {
        let slot = storage.attributeSlot[node]
        return slot < 0 ? nil : storage.attributes[Int(slot)]
    }
    /// Rows visible under the default expansion (groups and rows alike).
    public var defaultCount: Int { Int(storage.openRows[0]) - 1 }
}

extension Menu {
    /// A child in its parent's child list, with the default visible rows of its left siblings.
    struct ChildEntry: Sendable {
        var node: Int32
        var siblingPrefix: Int32
    }

    /// One node's structure. `depth` is -1 for the root; `siblingPrefix` is the default visible rows
    /// of its left siblings' subtrees; `subtreeEnd` is one past its last descendant.
    @usableFromInline
    struct NodeRecord: Sendable {
        @usableFromInline var parent: Int32
        @usableFromInline var siblingPrefix: Int32
        @usableFromInline var subtreeEnd: Int32
        @usableFromInline var firstChildSlot: Int32
        @usableFromInline var childCount: Int32
        @usableFromInline var depth: Int16
        @usableFromInline var flags: UInt8

        @usableFromInline
        init(
            parent: Int32, siblingPrefix: Int32, subtreeEnd: Int32, firstChildSlot: Int32, childCount: Int32,
            depth: Int16, flags: UInt8
        ) {
            self.parent = parent
            self.siblingPrefix = siblingPrefix
            self.subtreeEnd = subtreeEnd
            self.firstChildSlot = firstChildSlot
            self.childCount = childCount
            self.depth = depth
            self.flags = flags
        }
    }

    /// The frozen arrays. Every field is a `let` of Sendable values, so sharing across threads is safe.
    @usableFromInline
    final class Storage: Sendable {
        @usableFromInline static var groupFlag: UInt8 { 1 }
        @usableFromInline static var expandedFlag: UInt8 { 2 }

        let title: String?
        let searchable: [String]
        let version: String
        let height: Int
        let ids: [String]
        /// Each node's title in the default locale.
        let titles: [String]
        /// For each locale after the default, each node's title in it (16 bytes per node and locale,
        /// plus the text of titles too long to be stored inline; a title the config leaves out there
        /// shares the default's text).
        let otherTitles: [[String]]
        /// The menu's own title in each locale after the default.
        let otherRootTitles: [String?]
        /// ``Menu/locales``.
        let locales: [String]
        /// Each node's structure in one 24-byte record, so walking up (parent, depth, sibling
        /// prefix, flags) or down (child slot, count, subtree end) costs one cache line per node.
        @usableFromInline let records: [NodeRecord]
        /// Children of every group, group after group; `children[firstChildSlot[g] ..< + childCount[g]]`.
        /// Each carries its sibling prefix, so a group's binary search reads one contiguous run.
        let children: [ChildEntry]
        /// Rows shown by the node and its subtree when the node is expanded (itself included),
        /// with every descendant in its default state. 1 for a row.
        let openRows: [Int32]
        /// Leaf rows shown by the node's subtree when the node is expanded. 1 for a row.
        let openLeaves: [Int32]
        let attributeSlot: [Int32]
        let attributes: [[String: JSONValue]]
        let idIndex: IDIndex
        let timeZone: ZoneRules?
        /// Only the nodes whose config gives `hours` or `exceptions`.
        let openingHours: [Node: OpeningHours]
        /// The keys of ``openingHours`` in preorder.
        let scheduledNodes: [Node]
        /// Only the groups whose config gives `minSelect` or `maxSelect`.
        let selectionRules: [Node: SelectionRule]
        /// The keys of ``selectionRules`` in preorder.
        let ruledGroups: [Node]
        /// One bit per node, set where `whenUnavailable` is `hide`, given or inherited
        /// (``Menu/hidesWhenUnavailable(_:)``); empty when no node hides.
        let hiddenWhenUnavailable: [UInt64]
        /// The node at each visible row of the default expansion (4 bytes per default-visible row):
        /// a session that changed nothing finds a page's first row in O(1) instead of descending.
        let defaultRowNodes: [Int32]
        /// Rows (not groups) among the nodes before each position in preorder, `nodeCount + 2`
        /// entries: the leaves of `node`'s subtree are `leavesBefore[subtreeEnd] - leavesBefore[node]`
        /// in O(1), what a subtree shows fully expanded (``ExpansionMode/expanded``).
        let leavesBefore: [Int32]
        /// Direct children that are rows, per node: the leaves an expanded group shows when its
        /// children are all collapsed (``ExpansionMode/collapsed``).
        let leafChildren: [Int32]

        init(builder b: MenuBuilder, version: String) {
            title = b.title
            searchable = b.searchable
            self.version = version
            height = b.height
            ids = b.ids
            titles = b.titles
            otherTitles = b.otherTitles
            otherRootTitles = b.otherRootTitles
            locales = b.locales
            records = b.records
            children = b.children
            openRows = b.openRows
            openLeaves = b.openLeaves
            attributeSlot = b.attributeSlot
            attributes = b.attributes
            idIndex = b.idIndex
            timeZone = b.timeZone
            openingHours = Dictionary(uniqueKeysWithValues: b.openingHours.map { (Int($0.key), $0.value) })
            scheduledNodes = openingHours.keys.sorted()
            selectionRules = Dictionary(uniqueKeysWithValues: b.selectionRules.map { (Int($0.key), $0.value) })
            ruledGroups = selectionRules.keys.sorted()
            hiddenWhenUnavailable = MenuBuilder.hiddenWhenUnavailable(b.whenUnavailable, records: b.records)
            defaultRowNodes = Self.visibleRows(records: b.records)
            (leavesBefore, leafChildren) = Self.leafCounts(records: b.records)
        }

        /// ``leavesBefore`` and ``leafChildren`` in one pass over the records. O(n).
        private static func leafCounts(records: [NodeRecord]) -> (before: [Int32], children: [Int32]) {
            var before = [Int32](repeating: 0, count: records.count + 1)
            var children = [Int32](repeating: 0, count: records.count)
            var leaves: Int32 = 0
            for node in records.indices {
                before[node] = leaves
                guard node > 0, records[node].flags & groupFlag == 0 else { continue }
                leaves += 1
                children[Int(records[node].parent)] += 1
            }
            before[records.count] = leaves
            return (before, children)
        }

        /// Preorder, skipping the subtree of every group collapsed by default. O(n).
        private static func visibleRows(records: [NodeRecord]) -> [Int32] {
            var rows: [Int32] = []
            var node: Int32 = 1
            let end = records.first?.subtreeEnd ?? 1
            while node < end {
                rows.append(node)
                let record = records[Int(node)]
                let open = record.flags & Storage.groupFlag != 0 && record.flags & Storage.expandedFlag != 0
                node = open ? node + 1 : record.subtreeEnd
            }
            return rows
        }

    }
}
