/// Turns a decoded ``RawMenu`` into the frozen arrays of ``Menu``, validating as it goes and
/// collecting every problem with its JSON path. Mutable while it builds; used once per load.
struct MenuBuilder {
    static let depthLimit = 64
    static let nodeLimit = 10_000_000
    static let idLengthLimit = 128

    var title: String?
    var height = 0
    var ids: [String] = [""]
    var titles: [String] = [""]
    var parent: [Int32] = [-1]
    var depth: [Int32] = [-1]
    var subtreeEnd: [Int32] = [0]
    var flags: [UInt8] = [Menu.Storage.groupFlag | Menu.Storage.expandedFlag]
    var childCount: [Int32] = [0]
    var firstChildSlot: [Int32] = [0]
    var children: [Int32] = []
    var openRows: [Int32] = [1]
    var openLeaves: [Int32] = [0]
    var siblingPrefix: [Int32] = [0]
    var attributeSlot: [Int32] = [-1]
    var attributes: [[String: JSONValue]] = []
    var idIndex: [String: Int32] = [:]

    private(set) var problems: [ConfigProblem] = []
    private(set) var omittedProblems = 0
    /// The path of the node being built, as child ordinals from the top.
    private var trail: [Int] = []
    private var nodeLimitReported = false

    init(raw: RawMenu, expectedNodes: Int = 0) {
        if expectedNodes > 0 { reserve(expectedNodes + 1) }
        title = raw.title
        for problem in raw.problems.sorted(by: RawProblem.documentOrder) { report(problem, at: "") }
        let top = raw.items ?? []
        var childList: [Int32] = []
        childList.reserveCapacity(top.count)
        for (ordinal, node) in top.enumerated() {
            trail.append(ordinal)
            if let position = add(node, parent: 0, depth: 0) { childList.append(position) }
            trail.removeLast()
        }
        finishGroup(0, children: childList)
        subtreeEnd[0] = Int32(ids.count)
    }

    private mutating func reserve(_ count: Int) {
        ids.reserveCapacity(count); titles.reserveCapacity(count); parent.reserveCapacity(count)
        depth.reserveCapacity(count); subtreeEnd.reserveCapacity(count); flags.reserveCapacity(count)
        childCount.reserveCapacity(count); firstChildSlot.reserveCapacity(count); children.reserveCapacity(count)
        openRows.reserveCapacity(count); openLeaves.reserveCapacity(count); siblingPrefix.reserveCapacity(count)
        attributeSlot.reserveCapacity(count); idIndex.reserveCapacity(count)
    }

    /// Appends `raw` and its subtree in preorder; returns its position, or nil when it was not added.
    private mutating func add(_ raw: RawNode, parent parentPosition: Int32, depth level: Int) -> Int32? {
        for problem in raw.problems.sorted(by: RawProblem.documentOrder) { report(problem, at: currentPath) }
        guard level < Self.depthLimit else {
            report(.init(key: nil, kind: .tooDeep(limit: Self.depthLimit), value: raw.id.map { "\"\($0)\"" } ?? "a node"), at: currentPath)
            return nil
        }
        guard ids.count <= Self.nodeLimit else {
            if !nodeLimitReported {
                nodeLimitReported = true
                report(.init(key: nil, kind: .tooManyNodes(limit: Self.nodeLimit), value: ""), at: currentPath)
            }
            return nil
        }
        let position = Int32(ids.count)
        height = max(height, level + 1)

        let id = raw.id ?? ""
        if let given = raw.id {
            if !Self.isValidID(given) {
                report(.init(key: "id", kind: .invalidID, value: quoted(given)), at: currentPath)
            } else if let first = idIndex[given] {
                report(.init(key: "id", kind: .duplicateID(firstPath: path(of: Int(first)) + ".id"), value: quoted(given)), at: currentPath)
            } else {
                idIndex[given] = position
            }
        }
        if let title = raw.title, title.allSatisfy(\.isWhitespace) {
            report(.init(key: "title", kind: .emptyTitle, value: quoted(title)), at: currentPath)
        }
        let isGroup = raw.items != nil
        if !isGroup, let expanded = raw.expanded {
            report(.init(key: "expanded", kind: .expandedOnRow, value: String(expanded)), at: currentPath)
        }
        var nodeFlags: UInt8 = 0
        if isGroup { nodeFlags |= Menu.Storage.groupFlag }
        if isGroup && raw.expanded == true { nodeFlags |= Menu.Storage.expandedFlag }

        ids.append(id)
        titles.append(raw.title ?? "")
        parent.append(parentPosition)
        depth.append(Int32(level))
        subtreeEnd.append(0)
        flags.append(nodeFlags)
        childCount.append(0)
        firstChildSlot.append(0)
        openRows.append(1)
        openLeaves.append(isGroup ? 0 : 1)
        siblingPrefix.append(0)
        if let attrs = raw.attributes {
            attributeSlot.append(Int32(attributes.count))
            attributes.append(attrs)
        } else {
            attributeSlot.append(-1)
        }

        if let items = raw.items {
            var childList: [Int32] = []
            childList.reserveCapacity(items.count)
            for (ordinal, child) in items.enumerated() {
                trail.append(ordinal)
                if let childPosition = add(child, parent: position, depth: level + 1) { childList.append(childPosition) }
                trail.removeLast()
            }
            finishGroup(Int(position), children: childList)
        }
        subtreeEnd[Int(position)] = Int32(ids.count)
        return position
    }

    /// Records the group's children and derives its default sizes from theirs.
    private mutating func finishGroup(_ group: Int, children list: [Int32]) {
        firstChildSlot[group] = Int32(children.count)
        childCount[group] = Int32(list.count)
        children.append(contentsOf: list)
        var rows: Int32 = 1
        var leaves: Int32 = 0
        for child in list {
            let c = Int(child)
            siblingPrefix[c] = rows - 1
            let collapsedGroup = flags[c] == Menu.Storage.groupFlag
            rows += collapsedGroup ? 1 : openRows[c]
            leaves += collapsedGroup ? 0 : openLeaves[c]
        }
        openRows[group] = rows
        openLeaves[group] = leaves
    }

    static func isValidID(_ id: String) -> Bool {
        var length = 0
        for byte in id.utf8 {
            length += 1
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return length >= 1 && length <= idLengthLimit
    }

    // MARK: Paths and problems

    private var currentPath: String { Self.path(trail) }

    private static func path(_ ordinals: [Int]) -> String {
        ordinals.map { "items[\($0)]" }.joined(separator: ".")
    }

    /// The path of an already-added node, rebuilt from the parent links.
    private func path(of position: Int) -> String {
        var ordinals: [Int] = []
        var node = position
        while node > 0 {
            let up = Int(parent[node])
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
            let end = subtreeEnd[cursor]
            cursor = end == 0 ? node : Int(end)
        }
        return ordinal
    }

    private mutating func report(_ problem: RawProblem, at nodePath: String) {
        guard problems.count < MenuConfigError.problemLimit else {
            omittedProblems += 1
            return
        }
        var full = nodePath
        if let key = problem.key {
            full = full.isEmpty ? key : full + "." + key
        }
        problems.append(ConfigProblem(path: full.isEmpty ? "$" : full, kind: problem.kind, value: problem.value))
    }

    private func quoted(_ text: String) -> String {
        let shown = text.count > 60 ? String(text.prefix(60)) + "…" : text
        return "\"" + shown + "\""
    }
}
