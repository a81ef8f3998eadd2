import MenuModel

/// A reload's worth of random edits to a menu described in code, for the translation tests: delete
/// a subtree, insert a node (with a fresh id or one an earlier edit deleted), move a subtree under
/// another group (so to another depth), flip a group's default, turn a group into a row (its
/// children move up to its place) or a row into a group, never deeper than a config may nest.
/// Reproducible from the generator's seed.
package struct MenuEdits {
    package private(set) var items: [TreeSpec]
    /// Ids deleted so far and not inserted again: an insert may bring one back.
    private var deleted: [String] = []
    private var fresh = 0
    /// What each edit did, for failure messages.
    package private(set) var log: [String] = []

    package init(_ items: [TreeSpec]) { self.items = items }

    package mutating func applyRandom(_ count: Int, using rng: inout SplitMix64) {
        for _ in 0 ..< count { applyOne(using: &rng) }
    }

    private mutating func applyOne(using rng: inout SplitMix64) {
        let paths = Self.paths(items)
        let groups = paths.filter { node(at: $0).children != nil }
        let rows = paths.filter { node(at: $0).children == nil }
        switch Int.random(in: 0 ..< 6, using: &rng) {
        case 0 where !paths.isEmpty:
            let path = paths.randomElement(using: &rng)!
            let removed = remove(at: path)
            deleted += Self.ids(of: removed)
            log.append("delete \(removed.id)")
        case 1:
            let id: String
            if !deleted.isEmpty, Bool.random(using: &rng) {
                id = deleted.remove(at: Int.random(in: 0 ..< deleted.count, using: &rng))
            } else {
                fresh += 1
                id = "x\(fresh)"
            }
            let spec: TreeSpec =
                Bool.random(using: &rng)
                ? .group(id, expanded: Bool.random(using: &rng), freshRows(Int.random(in: 0 ... 3, using: &rng)))
                : .row(id)
            let parent = Self.parents(for: spec, among: groups).randomElement(using: &rng)!
            insert(spec, under: parent, using: &rng)
            log.append("insert \(id) under \(parent.isEmpty ? "the top" : node(at: parent).id)")
        case 2 where !paths.isEmpty:
            let moved = remove(at: paths.randomElement(using: &rng)!)
            let parent = Self.parents(for: moved, among: Self.paths(items).filter { node(at: $0).children != nil })
                .randomElement(using: &rng)!
            insert(moved, under: parent, using: &rng)
            log.append("move \(moved.id) under \(parent.isEmpty ? "the top" : node(at: parent).id)")
        case 3 where !groups.isEmpty:
            let path = groups.randomElement(using: &rng)!
            modify(at: path) { $0.expanded.toggle() }
            log.append("flip the default of \(node(at: path).id)")
        case 4 where !groups.isEmpty:
            let path = groups.randomElement(using: &rng)!
            let group = remove(at: path)
            withList(at: path.dropLast()) { list in
                list.insert(contentsOf: [TreeSpec.row(group.id)] + (group.children ?? []), at: path.last!)
            }
            log.append("turn group \(group.id) into a row")
        case 5 where rows.contains(where: { $0.count < Menu.depthLimit }):
            let path = rows.filter { $0.count < Menu.depthLimit }.randomElement(using: &rng)!
            let expanded = Bool.random(using: &rng)
            let children = freshRows(Int.random(in: 0 ... 2, using: &rng))
            modify(at: path) { $0 = .group($0.id, expanded: expanded, children) }
            log.append("turn row \(node(at: path).id) into a group")
        default:
            break
        }
    }

    private mutating func freshRows(_ count: Int) -> [TreeSpec] {
        (0 ..< count).map { _ in
            fresh += 1
            return .row("x\(fresh)")
        }
    }

    /// Every node's path of child indexes, in preorder.
    package static func paths(_ items: [TreeSpec], under prefix: [Int] = []) -> [[Int]] {
        items.enumerated().flatMap { index, item in
            let path = prefix + [index]
            return [path] + paths(item.children ?? [], under: path)
        }
    }

    /// The top level and those of `groups` under which `item` nests no deeper than the limit.
    static func parents(for item: TreeSpec, among groups: [[Int]]) -> [[Int]] {
        [[]] + groups.filter { $0.count + height(of: item) <= Menu.depthLimit }
    }

    /// Levels in `item`'s subtree: 1 for a row or an empty group.
    static func height(of item: TreeSpec) -> Int {
        1 + ((item.children ?? []).map(height(of:)).max() ?? 0)
    }

    static func ids(of item: TreeSpec) -> [String] {
        [item.id] + (item.children ?? []).flatMap(ids(of:))
    }

    package func node(at path: [Int]) -> TreeSpec {
        var list = items
        for index in path.dropLast() { list = list[index].children! }
        return list[path.last!]
    }

    private mutating func remove(at path: [Int]) -> TreeSpec {
        withList(at: path.dropLast()) { $0.remove(at: path.last!) }
    }

    private mutating func insert(_ item: TreeSpec, under parent: [Int], using rng: inout SplitMix64) {
        let count = withList(at: parent[...]) { $0.count }
        let index = Int.random(in: 0 ... count, using: &rng)
        withList(at: parent[...]) { $0.insert(item, at: index) }
    }

    private mutating func modify(at path: [Int], _ body: (inout TreeSpec) -> Void) {
        withList(at: path.dropLast()) { body(&$0[path.last!]) }
    }

    /// Calls `body` with the child list of the group at `parent` (the top-level list for []).
    private mutating func withList<Result>(at parent: ArraySlice<Int>, _ body: (inout [TreeSpec]) -> Result) -> Result {
        func descend(_ list: inout [TreeSpec], _ rest: ArraySlice<Int>) -> Result {
            guard let first = rest.first else { return body(&list) }
            return descend(&list[first].children!, rest.dropFirst())
        }
        return descend(&items, parent)
    }
}
