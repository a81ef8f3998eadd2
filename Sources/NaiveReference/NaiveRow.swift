import MenuModel

/// One row of a naive listing with every field the contract's rows carry, as a value (the tree's
/// items change in place; a listing kept for a later revision must not).
package struct NaiveRow: Sendable, Equatable {
    package var index: Int
    package var id: String
    package var title: String
    package var depth: Int
    /// nil for a top-level row.
    package var parentID: String?
    package var isGroup: Bool
    /// nil for a row (also below).
    package var isExpanded: Bool?
    package var childCount: Int?
    package var attributes: [String: JSONValue]?
    package var visibleDescendantCount: Int?
    /// Its place among its parent's children, from 1, and their number.
    package var positionInSet: Int
    package var setSize: Int
    /// A group's leaves at any depth (nil for a row).
    package var leafCount: Int?
}

extension NaiveMenu {
    /// The leaves under `item`, at any depth, counted one by one.
    static func leaves(under item: NaiveMenuItem) -> Int {
        item.children.reduce(0) { $0 + ($1.isGroup ? leaves(under: $1) : 1) }
    }

    /// Every visible row with every field, by one preorder walk (``flattened()``). O(n).
    package func listing() -> [NaiveRow] {
        flattened().map { index, item in
            NaiveRow(
                index: index, id: item.id, title: item.title, depth: item.depth,
                parentID: item.parent?.parent == nil ? nil : item.parent?.id, isGroup: item.isGroup,
                isExpanded: item.isGroup ? item.isExpand : nil, childCount: item.isGroup ? item.children.count : nil,
                attributes: item.attributes, visibleDescendantCount: item.visibleDescendantCount(),
                positionInSet: item.parent!.children.firstIndex { $0 === item }! + 1,
                setSize: item.parent!.children.count,
                leafCount: item.isGroup ? Self.leaves(under: item) : nil)
        }
    }
}
