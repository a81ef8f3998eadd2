import TimeZoneRules

/// Builds the frozen arrays of ``Menu`` node by node as ``ConfigParser`` reads them, validating as
/// it goes and collecting every problem with its JSON path. Mutable while it builds; used once.
struct MenuBuilder {
    static let depthLimit = 64
    static let nodeLimit = 10_000_000
    static let idLengthLimit = 128

    var title: String?
    /// The config's top-level `searchable`: string attributes search reads beside titles.
    var searchable: [String] = []
    var height = 0
    var ids: [String] = [""]
    var titles: [String] = [""]
    /// ``Menu/Storage/otherTitles``, filled by ``resolveLocales()`` once the whole document is read.
    var otherTitles: [[String]] = []
    var otherRootTitles: [String?] = []
    /// The default locale first, then the others (``Menu/locales``); empty without `defaultLocale`.
    var locales: [String] = []
    /// While reading: the document's `defaultLocale` and `locales` as given, and for each tag a
    /// title object uses, in order of first use, its titles by position ("" where a node gives
    /// none; a table is as long as its last node using it).
    var defaultLocaleTag: String?
    var listedLocales: [String]?
    var localeTables: [(tag: String, lowercased: [UInt8], titles: [String])] = []
    /// Position 0 is the implicit root: an always-expanded group at depth -1.
    var records: [Menu.NodeRecord] = [
        Menu.NodeRecord(
            parent: -1, siblingPrefix: 0, subtreeEnd: 0, firstChildSlot: 0, childCount: 0, depth: -1,
            flags: Menu.Storage.groupFlag | Menu.Storage.expandedFlag)
    ]
    var children: [Menu.ChildEntry] = []
    var openRows: [Int32] = [1]
    var openLeaves: [Int32] = [0]
    var attributeSlot: [Int32] = [-1]
    var attributes: [[String: JSONValue]] = []
    var idIndex = IDIndex()
    /// The document's `timeZone` as written, and its rules once ``resolveTimeZone()`` loaded them.
    var timeZoneName: String?
    var timeZone: ZoneRules?
    /// The `hours` and `exceptions` of the nodes that give them.
    var openingHours: [Int32: OpeningHours] = [:]
    /// The `minSelect` and `maxSelect` of the groups that give them (``setSelectionBound(_:_:of:)``).
    var selectionRules: [Int32: SelectionRule] = [:]
    /// The `whenUnavailable` of the nodes that give it: true for `hide`
    /// (``setWhenUnavailable(_:of:)``).
    var whenUnavailable: [Int32: Bool] = [:]
    /// The first node giving `hours` or `exceptions`, and which: named when no `timeZone` is given.
    var firstScheduledNode: (node: Int32, key: String)?

    private(set) var problems: [ConfigProblem] = []
    private(set) var omittedProblems = 0
    /// The path of the node being read, as child ordinals from the top.
    var trail: [Int] = []
    /// The node whose object is being read (0: the document).
    private var openNode: Int32 = 0
    /// For each of `problems`, the node it is about (0: none), named by id once the whole node is
    /// read (its `id` may come after the problem in the object).
    private var problemNodes: [Int32] = []
    private var nodeLimitReported = false

    /// At most this many nodes (``nodeLimit`` unless a test asks for fewer).
    let maxNodes: Int

    init(expectedNodes: Int = 0, maxNodes: Int = MenuBuilder.nodeLimit) {
        self.maxNodes = maxNodes
        if expectedNodes > 0 { reserve(min(expectedNodes, maxNodes) + 1) }
        idIndex = IDIndex(expectedCount: expectedNodes)
    }

    private mutating func reserve(_ count: Int) {
        ids.reserveCapacity(count)
        titles.reserveCapacity(count)
        records.reserveCapacity(count)
        children.reserveCapacity(count)
        openRows.reserveCapacity(count)
        openLeaves.reserveCapacity(count)
        attributeSlot.reserveCapacity(count)
    }

    // MARK: Streaming: one node at a time, in document (pre)order

    /// Starts a node under `parentPosition`; nil (with the problem reported) when it is too deep
    /// or the menu has too many nodes, in which case the caller skips the node's value.
    mutating func beginNode(parent parentPosition: Int32, depth level: Int) -> Int32? {
        guard level < Self.depthLimit else {
            report(.init(key: nil, kind: .tooDeep(limit: Self.depthLimit), value: "a node"))
            return nil
        }
        guard ids.count <= maxNodes else {
            if !nodeLimitReported {
                nodeLimitReported = true
                report(.init(key: nil, kind: .tooManyNodes(limit: maxNodes), value: ""))
            }
            return nil
        }
        let position = Int32(ids.count)
        height = max(height, level + 1)
        ids.append("")
        titles.append("")
        records.append(
            Menu.NodeRecord(
                parent: parentPosition, siblingPrefix: 0, subtreeEnd: 0, firstChildSlot: 0,
                childCount: 0, depth: Int16(level), flags: 0))
        openRows.append(1)
        openLeaves.append(1)
        attributeSlot.append(-1)
        openNode = position
        return position
    }

    /// Records a node's id: checks its characters and that it is not taken.
    mutating func setID(_ id: String, of position: Int32) {
        let p = Int(position)
        ids[p] = id
        if !Self.isValidID(id) {
            report(.init(key: "id", kind: .invalidID, value: quoted(id)))
        } else if let first = idIndex.insert(id, position: position, ids: ids) {
            report(.init(key: "id", kind: .duplicateID(firstPath: path(of: Int(first)) + ".id"), value: quoted(id)))
        }
    }

    mutating func setTitle(_ title: String, of position: Int32) {
        if Self.isBlank(title) {
            report(.init(key: "title", kind: .emptyTitle, value: quoted(title)))
        }
        titles[Int(position)] = title
    }

    mutating func setAttributes(_ values: [String: JSONValue], of position: Int32) {
        attributeSlot[Int(position)] = Int32(attributes.count)
        attributes.append(values)
    }

    /// Ends a node: `children` is nil for a row. Reports what only the whole object shows.
    mutating func endNode(_ position: Int32, sawID: Bool, sawTitle: Bool, expanded: Bool?, children list: [Int32]?) {
        if !sawID { report(.init(key: nil, kind: .missingKey, value: "\"id\"")) }
        if !sawTitle { report(.init(key: nil, kind: .missingKey, value: "\"title\"")) }
        let p = Int(position)
        if let list {
            records[p].flags = Menu.Storage.groupFlag | (expanded == true ? Menu.Storage.expandedFlag : 0)
            finishGroup(p, children: list)
        } else if let expanded {
            report(.init(key: "expanded", kind: .expandedOnRow, value: String(expanded)))
        }
        records[p].subtreeEnd = Int32(ids.count)
        if selectionRules[position] != nil { checkSelectionRule(of: position, isGroup: list != nil) }
        openNode = records[p].parent
    }

    /// Ends the implicit root.
    mutating func endRoot(children list: [Int32]) {
        finishGroup(0, children: list)
        records[0].subtreeEnd = Int32(ids.count)
    }

    /// Records the group's children and derives its default sizes from theirs.
    private mutating func finishGroup(_ group: Int, children list: [Int32]) {
        records[group].firstChildSlot = Int32(children.count)
        records[group].childCount = Int32(list.count)
        var rows: Int32 = 1
        var leaves: Int32 = 0
        for child in list {
            let c = Int(child)
            records[c].siblingPrefix = rows - 1
            children.append(Menu.ChildEntry(node: child, siblingPrefix: rows - 1))
            let collapsedGroup = records[c].flags == Menu.Storage.groupFlag
            rows += collapsedGroup ? 1 : openRows[c]
            leaves += collapsedGroup ? 0 : openLeaves[c]
        }
        openRows[group] = rows
        openLeaves[group] = leaves
    }

    /// Empty or only whitespace. Any visible ASCII byte answers at once, without Unicode tables.
    static func isBlank(_ text: String) -> Bool {
        if text.utf8.contains(where: { $0 > 0x20 && $0 < 0x80 }) { return false }
        return text.allSatisfy(\.isWhitespace)
    }

    static func isValidID(_ id: String) -> Bool {
        var length = 0
        for byte in id.utf8 {
            length += 1
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return length >= 1 && length <= idLengthLimit
    }

    // MARK: Paths and problems

    /// The path of the value being read; `$` for the document itself.
    var currentPath: String { trail.isEmpty ? "$" : Self.path(trail) }

    private static func path(_ ordinals: [Int]) -> String {
        ordinals.map { "items[\($0)]" }.joined(separator: ".")
    }

    /// The path of an already-added node, rebuilt from the parent links.
    private func path(of position: Int) -> String {
        var ordinals: [Int] = []
        var node = position
        while node > 0 {
            let up = Int(records[node].parent)
            let siblings = siblingOrdinal(of: node, in: up)
            ordinals.append(siblings)
            node = up
        }
        return Self.path(ordinals.reversed())
    }

    /// The node's index among its parent's children, counted in preorder (the parent may still be open).
    private func siblingOrdinal(of node: Int, in parentNode: Int) -> Int {
        var ordinal = 0
        var cursor = parentNode + 1
        while cursor < node {
            ordinal += 1
            let end = records[cursor].subtreeEnd
            cursor = end == 0 ? node : Int(end)
        }
        return ordinal
    }

    /// Records a problem at the current path (plus `key`, when the problem is one field's).
    mutating func report(_ problem: PendingProblem) {
        guard problems.count < MenuConfigError.problemLimit else {
            omittedProblems += 1
            return
        }
        var full = trail.isEmpty ? "" : Self.path(trail)
        if let key = problem.key {
            full = full.isEmpty ? key : full + "." + key
        }
        problems.append(ConfigProblem(path: full.isEmpty ? "$" : full, kind: problem.kind, value: problem.value))
        // The open node's own object is being read when the trail ends at it; a deeper trail is an
        // element of its `items` that is no node (not an object, too deep, over the limit).
        problemNodes.append(Int(records[Int(openNode)].depth) + 1 == trail.count ? openNode : 0)
    }

    /// Records a problem about node `node` (0: the document) once the whole document is read:
    /// its path rebuilt from the parent links, plus `key`.
    mutating func report(node: Int, key: String, kind: ConfigProblem.Kind, value: String) {
        guard problems.count < MenuConfigError.problemLimit else {
            omittedProblems += 1
            return
        }
        let base = node == 0 ? "" : path(of: node)
        problems.append(ConfigProblem(path: base.isEmpty ? key : base + "." + key, kind: kind, value: value))
        problemNodes.append(Int32(node))
    }

    /// ``problems``, each naming the id of its node when that node has a valid one.
    var problemsWithNodeIDs: [ConfigProblem] {
        zip(problems, problemNodes).map { problem, node in
            var named = problem
            if node != 0, Self.isValidID(ids[Int(node)]) { named.nodeID = ids[Int(node)] }
            return named
        }
    }

    func quoted(_ text: String) -> String {
        let shown = text.count > 60 ? String(text.prefix(60)) + "…" : text
        return "\"" + shown + "\""
    }
}

/// A problem about to be recorded; `key` is relative to the current node (nil: the node itself).
struct PendingProblem {
    var key: String?
    var kind: ConfigProblem.Kind
    var value: String
}

extension Menu {
    /// How deep a config may nest: for generators of test menus, which must stay within it.
    package static let depthLimit = MenuBuilder.depthLimit
}
