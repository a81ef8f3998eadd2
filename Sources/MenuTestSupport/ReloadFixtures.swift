import Foundation
import MenuModel

/// Menus for reload tests: generation `k` of one restaurant menu, whose shape changes from one
/// generation to the next in every way a reload can change a group:
/// - `seasonal` (a group) exists only in odd generations;
/// - `drinks` is a row in generations divisible by 3, a group otherwise;
/// - `mains` is expanded by default in odd generations, collapsed in even ones;
/// - `specials` sits under `mains` in even generations and at the top level in odd ones;
/// - every title ends in `@k`, so each generation has its own `version` and a row shows which
///   generation it came from.
package enum ReloadMenus {
    /// Every id that is a group in some generation.
    package static let groupIDs = [
        "mains", "mains-noodles", "specials", "seasonal", "drinks", "desserts", "desserts-cakes", "sides"
    ]

    package static func json(generation k: Int) -> String {
        func leaf(_ id: String) -> [String: Any] { ["id": id, "title": "\(id)@\(k)"] }
        func group(_ id: String, expanded: Bool = false, _ items: [[String: Any]]) -> [String: Any] {
            ["id": id, "title": "\(id)@\(k)", "expanded": expanded, "items": items]
        }
        let specials = group("specials", [leaf("special-1"), leaf("special-2")])
        var mainsItems: [[String: Any]] = [
            group("mains-noodles", [leaf("dan-dan"), leaf("zhajiang")]), leaf("mapo-tofu")
        ]
        if k % 2 == 0 { mainsItems.append(specials) }
        var items: [[String: Any]] = [group("mains", expanded: k % 2 == 1, mainsItems)]
        if k % 2 == 1 {
            items.append(specials)
            items.append(group("seasonal", [leaf("hotpot"), leaf("lotus-root")]))
        }
        items.append(k % 3 == 0 ? leaf("drinks") : group("drinks", [leaf("tea"), leaf("beer")]))
        items.append(
            group("desserts", expanded: true, [group("desserts-cakes", [leaf("sesame-cake")]), leaf("grass-jelly")]))
        items.append(group("sides", [leaf("rice"), leaf("cucumber")]))
        let data = try! JSONSerialization.data(
            withJSONObject: ["title": "reload@\(k)", "items": items], options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    package static func menu(generation k: Int) -> Menu { try! Menu(jsonData: Data(json(generation: k).utf8)) }

    /// Writes generation `k` to `path` as a deployment would: a temporary file renamed over it.
    package static func write(generation k: Int, to path: String) throws {
        let temporary = path + ".tmp"
        try Data(json(generation: k).utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}

/// What one session should look like after reloads, by the rule: a group's explicit choice is
/// kept by id while the group exists; once a menu does not have it as a group, or its default
/// there equals the choice, the choice is gone and the group follows each menu's default.
package struct ReloadExpectation: Sendable {
    package init() {}

    /// The last choice acknowledged per group, and the generation it was applied on.
    package private(set) var choices: [String: (isExpanded: Bool, generation: Int)] = [:]

    package mutating func acknowledge(_ id: String, isExpanded: Bool, generation: Int) {
        choices[id] = (isExpanded, generation)
    }

    /// The explicit choices still in force at generation `k`, given `menus[j]` for each generation.
    package func choices(at k: Int, menus: [Int: Menu]) -> [String: Bool] {
        var result: [String: Bool] = [:]
        for (id, choice) in choices where choice.generation <= k {
            var alive = true
            for j in choice.generation ... k {
                guard let menu = menus[j], let node = menu.node(withID: id), menu.isGroup(node),
                    menu.isExpandedByDefault(node) != choice.isExpanded
                else {
                    alive = false
                    break
                }
            }
            if alive { result[id] = choice.isExpanded }
        }
        return result
    }

    /// The view of generation `k`'s menu with the choices in force then, built from scratch by id.
    package func view(at k: Int, menus: [Int: Menu]) -> FlattenedView {
        var view = FlattenedView(menu: menus[k]!)
        for (id, isExpanded) in choices(at: k, menus: menus) { _ = try! view.setExpanded(id, isExpanded) }
        return view
    }
}
