import Testing

@testable import MenuModel

/// The load-time check of everything the builder derived (``MenuBuilder/verifyStructure()``),
/// fed the broken trees a parser bug would build.
@Suite struct StructureVerificationTests {
    /// A group `g` with one row `r` under it, built as the parser would; `list` is the child list
    /// the group is ended with (the real one is `[r]`).
    func builder(groupEndsWith list: (_ row: Int32) -> [Int32]) -> (MenuBuilder, group: Int32) {
        var builder = MenuBuilder()
        builder.trail = [0]
        let group = builder.beginNode(parent: 0, depth: 0)!
        builder.setID("g", of: group)
        builder.setTitle("G", of: group)
        builder.trail = [0, 0]
        let row = builder.beginNode(parent: group, depth: 1)!
        builder.setID("r", of: row)
        builder.setTitle("R", of: row)
        builder.endNode(row, sawID: true, sawTitle: true, expanded: nil, children: nil)
        builder.trail = [0]
        builder.endNode(group, sawID: true, sawTitle: true, expanded: true, children: list(row))
        builder.trail = []
        builder.endRoot(children: [group])
        return (builder, group)
    }

    func violation(_ builder: MenuBuilder) -> MenuBuilder.StructureViolation? {
        do throws(MenuBuilder.StructureViolation) {
            try builder.verifyStructure()
            return nil
        } catch {
            return error
        }
    }

    @Test func theTreeAsTheParserBuildsItPasses() {
        #expect(violation(builder { [$0] }.0) == nil)
    }

    @Test func aNodeInNoChildListIsCaught() {
        // What a second `items` list did: the first list's nodes stayed in preorder, in no list.
        let (built, group) = builder { _ in [] }
        #expect(violation(built)?.node == Int(group))
    }

    @Test func aNodeInTwoChildListsIsCaught() {
        let (built, group) = builder { [$0, $0] }
        #expect(violation(built)?.node == Int(group))
    }

    @Test func anOpenSizeThatIsNotItsChildrensSumIsCaught() {
        var (built, group) = builder { [$0] }
        built.openRows[Int(group)] += 1
        #expect(violation(built)?.detail.hasPrefix("open sizes") == true)
    }

    @Test func aViolationIsRefusedAsAConfigErrorNamingTheNode() {
        let problem = ConfigProblem(
            path: "$", kind: .inconsistentStructure(detail: "child list does not tile its subtree in preorder"),
            value: #"node 1 (id "g")"#)
        #expect(
            problem.description.hasPrefix(
                #"the menu built from this config is inconsistent at node 1 (id "g"): child list"#))
    }
}
