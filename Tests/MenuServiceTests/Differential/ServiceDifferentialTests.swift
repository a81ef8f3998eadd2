import DurableTestSupport
import Foundation
import MenuService
import MenuSessions
import MenuSessionsDurable
import MenuSessionsRedis
import NaiveReference
import RedisClient
import RedisTestSupport
import Testing

/// The whole contract of one session against the seeds' naive walk, through the service
/// in-process (``MenuAPI/respond(to:)``, over the in-memory store and, on one tree each, the
/// durable one and two Redis store instances on one redis-server, the requests moving between them):
/// toggles, sets, recursive sets, expand and collapse all and the reset to the defaults,
/// reveals, and writes that must be refused (a row's id, an unknown id, an `If-Match` of an old
/// revision), mixed at random over several sessions on random trees. After every write: its answer
/// field by field (revision included) and its splice replayed onto the rows before it; the whole
/// table, every field of every row; `/count` revalidated with the last `ETag`; nodes; anchored
/// pages; every fourth step `/changes?since=R` for an older `R`, whose entries must be the oracle's
/// and, replayed onto the rows saved at `R`, give the rows of now (or 410 once the history no
/// longer reaches `R`); every eighth step `GET /session`, the oracle's record by id, which
/// posted back to `POST /sessions` makes a session with the same table. Every 60 steps the menu
/// is reloaded with random edits (on every instance): each session's compact selection must
/// choose the oracle's leaves, the oracle is carried over by the reload rule by id, and the reload's
/// feed entry must take the rows before it to the rows after it. Every eighth step also reads a
/// search's filtered view (`/rows?q=`), every field of every row with the session's selection. The durable store is then
/// reopened: every session's table, revision and `ETag` must come back, its splices not (410).
///
/// The oracle (``NaiveSession``) keeps the state by its definition (base, marks, flips by id),
/// flips its tree's groups as the seeds did, and checks the two agree after every write; a
/// revision is a write that changed that state.
///
/// Seeds are random on each run and printed with every failure; set `MENU_DIFFERENTIAL_SEED` to
/// replay one.
@Suite("Service: every operation against the naive sessions")
struct ServiceDifferentialTests {
    /// A kind of random menu, how many steps to run on it, and the store that serves it.
    struct Tree: Sendable, CustomTestStringConvertible {
        var name: String
        var steps: Int
        var durable = false
        /// Served by two Redis store instances on one redis-server, switching every 100 steps.
        var redis = false
        var make: @Sendable (inout SplitMix64) -> [TreeSpec]
        var testDescription: String {
            name + (durable ? ", durable store" : redis ? ", two Redis store instances" : "")
        }
    }

    static let trees: [Tree] = [
        Tree(name: "bushy, 200 nodes, 6 levels", steps: 700) {
            withSelectionRules(randomTree(nodes: 200, maxDepth: 5, using: &$0), using: &$0)
        },
        Tree(name: "wide, 400 nodes, 3 levels", steps: 400) {
            withSelectionRules(randomTree(nodes: 400, maxDepth: 2, width: 0 ... 14, using: &$0), using: &$0)
        },
        Tree(name: "narrow, 80 nodes, 12 levels", steps: 900) {
            withSelectionRules(randomTree(nodes: 80, maxDepth: 11, width: 0 ... 3, using: &$0), using: &$0)
        },
        Tree(name: "bushy, 150 nodes, 6 levels", steps: 400, durable: true) {
            withSelectionRules(randomTree(nodes: 150, maxDepth: 5, using: &$0), using: &$0)
        },
        Tree(name: "bushy, 150 nodes, 6 levels", steps: 400, redis: true) {
            withSelectionRules(randomTree(nodes: 150, maxDepth: 5, using: &$0), using: &$0)
        }
    ]

    static let baseSeed: UInt64 =
        ProcessInfo.processInfo.environment["MENU_DIFFERENTIAL_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 0 ... UInt64.max)

    @Test(arguments: trees)
    func everyAnswerAndEveryReadOfEverySessionMatchTheNaiveSessions(tree: Tree) throws {
        var rng = SplitMix64(state: Self.baseSeed)
        var spec = tree.make(&rng)
        while !spec.contains(where: { $0.children != nil }) { spec = tree.make(&rng) }
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let redis = tree.redis ? try RedisServerProcess() : nil
        var instances: [RedisSessionStore] = []
        defer {
            for instance in instances { instance.stop() }
            redis?.stop()
        }
        func redisInstance(_ menu: MenuGeneration, _ limits: SessionLimits) -> RedisSessionStore {
            let options = RedisStoreOptions(
                redis: RedisOptions(timeout: .seconds(2)), maxChangedGroups: limits.maxChangedGroups,
                historyLimit: limits.changeHistory)
            instances.append(RedisSessionStore(endpoint: redis!.endpoint, options: options, menu: menu))
            return instances[instances.count - 1]
        }
        let run = try ServiceDifferentialRun(spec: spec, sessions: 3, history: 12, rng: rng) {
            menu, limits -> any SessionStore in
            if tree.durable { return try DurableSessionStore(directory: directory.path, menu: menu, limits: limits) }
            if tree.redis { return redisInstance(menu, limits) }
            return InMemorySessionStore(menu: menu, limits: limits)
        }
        defer { (run.service.store as? DurableSessionStore)?.close() }
        if tree.redis { _ = redisInstance(MenuGeneration(run.service.menu), run.limits) }
        for step in 0 ..< tree.steps {
            do {
                if tree.redis, step > 0, step % 100 == 0 { try run.switchInstance(to: instances[step / 100 % 2]) }
                if step % 60 == 30 { try run.reload(edits: 1 + step % 5, alsoOn: instances) }
                try run.step(step)
            } catch {
                Issue.record(
                    "\(tree.testDescription), MENU_DIFFERENTIAL_SEED=\(Self.baseSeed), step \(step) after \(run.trail.joined(separator: "; ")): \(error)"
                )
                return
            }
        }
        guard let durable = run.service.store as? DurableSessionStore else { return }
        durable.close()
        do {
            try run.restart(
                on: try DurableSessionStore(
                    directory: directory.path, menu: run.service.store.currentMenu, limits: run.limits))
        } catch {
            Issue.record(
                "\(tree.testDescription), MENU_DIFFERENTIAL_SEED=\(Self.baseSeed), after reopening the store: \(error)")
        }
    }
}
