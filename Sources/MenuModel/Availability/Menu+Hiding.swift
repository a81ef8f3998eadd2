import Foundation

extension Menu {
    /// This menu without the subtrees of `hidden` (nodes of this menu, in any order; a node under
    /// another one listed goes with it): what the listing shows while those nodes are unavailable
    /// and hide (``hidesWhenUnavailable(_:)``). Every kept node keeps its id, titles in every
    /// locale, attributes, default expansion, hours, selection rule and `whenUnavailable`; a group
    /// whose children are all hidden stays a group, with none. The result's ``version`` is
    /// `<version>~<hash of the hidden ids>`: another listing, so every session's state is carried
    /// over by id as after a reload; the same hidden set gives the same version on every instance.
    ///
    /// Cost: O(n) (the new menu's arrays and indexes are built again, as at load, from the
    /// frozen ones instead of the JSON); `hidden` empty answers this menu itself.
    public func hiding(_ hidden: [Node]) -> Menu {
        guard !hidden.isEmpty else { return self }
        let roots = hidden.sorted()
        var builder = MenuBuilder(expectedNodes: nodeCount)
        builder.title = storage.title
        builder.searchable = storage.searchable
        builder.timeZone = storage.timeZone
        builder.locales = storage.locales
        builder.otherRootTitles = storage.otherRootTitles
        var kept: [Node] = [0]
        kept.reserveCapacity(nodeCount + 1)
        // Open groups, innermost last: the new position and the new positions of its children.
        var open: [(old: Node, new: Int32, children: [Int32])] = [(0, 0, [])]
        var nextRoot = 0
        var node = 1
        let end = subtreeEnd(0)
        func close(before node: Node) {
            while open.count > 1, let top = open.last, subtreeEnd(top.old) <= node {
                open.removeLast()
                builder.endNode(
                    top.new, sawID: true, sawTitle: true, expanded: isExpandedByDefault(top.old), children: top.children
                )
                open[open.count - 1].children.append(top.new)
            }
        }
        while node < end {
            close(before: node)
            while nextRoot < roots.count, roots[nextRoot] < node { nextRoot += 1 }
            if nextRoot < roots.count, roots[nextRoot] == node {
                node = subtreeEnd(node)
                continue
            }
            let parent = open[open.count - 1].new
            guard let position = builder.beginNode(parent: parent, depth: depth(of: node)) else {
                preconditionFailure("a menu that loaded has no more nodes or levels than a config may")
            }
            kept.append(node)
            builder.setID(id(of: node), of: position)
            builder.titles[Int(position)] = title(of: node)
            if let attributes = attributes(of: node) { builder.setAttributes(attributes, of: position) }
            if let hours = openingHours(of: node) { builder.openingHours[position] = hours }
            if let rule = selectionRule(of: node) { builder.selectionRules[position] = rule }
            if hidesWhenUnavailable(node) { builder.whenUnavailable[position] = true }
            if isGroup(node) {
                open.append((node, position, []))
            } else {
                builder.endNode(position, sawID: true, sawTitle: true, expanded: nil, children: nil)
                open[open.count - 1].children.append(position)
            }
            node += 1
        }
        close(before: end)
        builder.endRoot(children: open[0].children)
        builder.otherTitles = storage.otherTitles.map { titles in kept.map { titles[$0] } }
        precondition(builder.problems.isEmpty, "a menu that loaded gives no config problem: \(builder.problems)")
        let hiddenIDs = roots.map(id(of:)).joined(separator: "\n")
        return Menu(
            storage: Storage(builder: builder, version: version + "~" + ContentHash.hex(of: Data(hiddenIDs.utf8))))
    }
}
