import Foundation
import MenuModel
import NaiveReference

/// The tests' own menu (`LivePaths.menuConfig`, a fixture; not the shipped `Config/menu.json`).
package func sichuanMenu() throws -> Menu {
    try Menu(contentsOfFile: LivePaths.menuConfig)
}

/// A menu of `groups` collapsed top-level groups `g0`, `g1`, … each holding one row: a session
/// that expands k of them holds k flips and k overlay entries, so its bytes grow with k.
package func wideMenu(groups: Int) throws -> Menu {
    let items = (0 ..< groups).map {
        #"{"id":"g\#($0)","title":"G\#($0)","items":[{"id":"r\#($0)","title":"R\#($0)"}]}"#
    }
    return try Menu(jsonData: Data((#"{"title":"Wide","items":["# + items.joined(separator: ",") + "]}").utf8))
}

/// The state of a session of `menu` (a ``wideMenu(groups:)``) that expanded groups `g<first>` to `g<first + count - 1>`.
package func expandedState(_ range: Range<Int>, in menu: Menu) -> SessionState {
    var ignored: [String] = []
    let flips = range.map { PortableState.Flip(id: "g\($0)", isExpanded: true) }
    return SessionState(portable: PortableState(flips: flips), in: menu, ignoredIDs: &ignored)
}

/// The session stores' tests' menu:
/// a (open) > [a1, b (closed) > [b1]]; c (open) > [c1, c2]; d (closed) > [d1]; e (open) > [e1].
package func storeTestMenu() throws -> Menu {
    try makeMenu([
        .group("a", expanded: true, [.row("a1"), .group("b", expanded: false, [.row("b1")])]),
        .group("c", expanded: true, [.row("c1"), .row("c2")]),
        .group("d", expanded: false, [.row("d1")]),
        .group("e", expanded: true, [.row("e1")])
    ])
}

/// The groups of `state` on `menu` that are expanded, by id.
package func expandedGroups(_ state: SessionState, on menu: Menu) -> Set<String> {
    let view = FlattenedView(menu: menu, state: state)
    return Set(menu.nodes.filter { menu.isGroup($0) && view.isExpanded($0) }.map { menu.id(of: $0) })
}
