import Foundation
import NaiveReference
import Testing

@testable import MenuModel

/// ``ListingDiff``: its splices, applied in order to the old listing, give the new one; it keeps
/// as many rows as a longest common subsequence (checked against the quadratic one on small
/// listings); a dish added is one splice; and between two menus (random edits, a session's state
/// carried over) it takes the old rows to the new ones and names exactly the kept rows whose
/// content changed.
struct ListingDiffTests {
    /// `old` with `diff`'s splices applied, inserted rows taken from `new` as a client fetches them.
    private static func applied<Key>(_ diff: ListingDiff, to old: [Key], new: [Key]) -> [Key] {
        var rows = old
        for change in diff.changes {
            rows.replaceSubrange(
                change.at ..< change.at + change.removed, with: new[change.at ..< change.at + change.inserted])
        }
        return rows
    }

    /// The length of a longest common subsequence, by the textbook O(n·m) table.
    private static func commonLength(_ a: [Int], _ b: [Int]) -> Int {
        var row = [Int](repeating: 0, count: b.count + 1)
        for x in a {
            var diagonal = 0
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = x == y ? diagonal + 1 : max(row[j], above)
                diagonal = above
            }
        }
        return row[b.count]
    }

    @Test func aDishAddedIsOneSpliceAndATitleChangedIsOneReconfiguredRow() {
        let old = ["soups", "hot-sour", "wonton", "mains", "mapo"]
        let new = ["soups", "hot-sour", "egg-drop", "wonton", "mains", "mapo"]
        let diff = ListingDiff(old: old, new: new) { i, _ in old[i] != "mapo" }
        #expect(diff.changes == [RowChange(at: 2, inserted: 1, removed: 0)])
        #expect(diff.reconfigured == [5])
        #expect(ListingDiff(old: old, new: old).changes.isEmpty)
        #expect(ListingDiff(old: [String](), new: old).changes == [RowChange(at: 0, inserted: 5, removed: 0)])
        #expect(ListingDiff(old: old, new: [String]()).changes == [RowChange(at: 0, inserted: 0, removed: 5)])
    }

    @Test(arguments: 0 ..< 4 as Range<UInt64>)
    func randomListingsComeOutRightAndKeepALongestCommonSubsequence(seed: UInt64) {
        var rng = SplitMix64(state: 0x115D ^ seed &* 0x9E37_79B9_7F4A_7C15)
        for round in 0 ..< 300 {
            let size = Int.random(in: 0 ... (round % 10 == 0 ? 400 : 30), using: &rng)
            let old = Array(0 ..< size).shuffled(using: &rng)
            var new = old.filter { _ in Int.random(in: 0 ..< 5, using: &rng) > 0 }  // a fifth removed
            for fresh in 0 ..< Int.random(in: 0 ... 6, using: &rng) {
                new.insert(1_000 + fresh, at: Int.random(in: 0 ... new.count, using: &rng))
            }
            for _ in 0 ..< Int.random(in: 0 ... 3, using: &rng) where !new.isEmpty {  // moves
                let moved = new.remove(at: Int.random(in: 0 ..< new.count, using: &rng))
                new.insert(moved, at: Int.random(in: 0 ... new.count, using: &rng))
            }
            let diff = ListingDiff(old: old, new: new)
            #expect(Self.applied(diff, to: old, new: new) == new, "seed \(seed), round \(round)")
            let removed = diff.changes.reduce(0) { $0 + $1.removed }
            if size <= 60 {
                #expect(
                    old.count - removed == Self.commonLength(old, new), "seed \(seed), round \(round): not the fewest")
            }
            #expect(diff.changes.allSatisfy { $0.inserted > 0 || $0.removed > 0 })
        }
    }

    @Test(arguments: 0 ..< 4 as Range<UInt64>)
    func betweenTwoMenusTheOldRowsBecomeTheNewAndOnlyChangedRowsAreReconfigured(seed: UInt64) throws {
        var rng = SplitMix64(state: 0xD1FF ^ seed &* 0x9E37_79B9_7F4A_7C15)
        for pair in 0 ..< 40 {
            var edits = MenuEdits(randomTree(nodes: Int.random(in: 0 ... 80, using: &rng), maxDepth: 4, using: &rng))
            let oldMenu = try makeMenu(edits.items)
            edits.applyRandom(Int.random(in: 1 ... 8, using: &rng), using: &rng)
            let newMenu = try makeMenu(edits.items)
            var old = FlattenedView(menu: oldMenu)
            let groups = oldMenu.nodes.filter(oldMenu.isGroup).map(oldMenu.id(of:))
            for _ in 0 ..< Int.random(in: 0 ... 20, using: &rng) {
                if let id = groups.randomElement(using: &rng) { _ = try old.toggle(id) }
            }
            let carried = old.state.carried(through: [MenuTranslation(from: oldMenu, to: newMenu)], onto: newMenu)
            let new = FlattenedView(menu: newMenu, state: carried)
            let diff = ListingDiff.between(old, new)
            let context = "seed \(seed), pair \(pair): \(edits.log.joined(separator: "; "))"
            let oldRows = old.rows(offset: 0, limit: old.count + 1)
            let newRows = new.rows(offset: 0, limit: new.count + 1)
            #expect(
                Self.applied(diff, to: oldRows.map(\.id), new: newRows.map(\.id)) == newRows.map(\.id), "\(context)")
            // A kept row is reconfigured exactly when what a client shows of it differs.
            let oldByID = Dictionary(uniqueKeysWithValues: oldRows.map { ($0.id, $0) })
            var kept = Set(newRows.indices.filter { oldByID[newRows[$0].id] != nil })
            for change in diff.changes {  // rows a splice inserts (at their new indices) are not kept
                kept.subtract(change.at ..< change.at + change.inserted)
            }
            for index in kept {
                let (was, now) = (oldByID[newRows[index].id]!, newRows[index])
                let changed =
                    was.title != now.title || was.attributes != now.attributes || was.isGroup != now.isGroup
                    || was.isExpanded != now.isExpanded || was.childCount != now.childCount
                    || was.depth != now.depth || was.parentID != now.parentID
                    || was.visibleDescendantCount != now.visibleDescendantCount
                    || was.positionInSet != now.positionInSet || was.setSize != now.setSize
                    || was.leafCount != now.leafCount || was.selected != now.selected
                    || was.selectedCount != now.selectedCount
                #expect(diff.reconfigured.contains(index) == changed, "row \(now.id); \(context)")
            }
            #expect(diff.reconfigured.allSatisfy(kept.contains), "\(context)")
        }
    }
}
