import DurableTestSupport
import Foundation
import MenuModel
import MenuSessions
import MenuSessionsDurable
import MenuSessionsRedis
import RedisTestSupport

/// The three session stores a differential runs on, each made fresh for one round.
enum DifferentialStore: String, CaseIterable, Sendable {
    case memory, durable, redis

    /// A store of this kind on `menu` for round `round`: the durable one in a directory of its
    /// own under `directory`, the Redis one on `redis` under a prefix of its own (`prefix` and
    /// the round). The second value closes it.
    func make(
        on menu: Menu, round: Int, in directory: DurableTemporaryDirectory, redis: RedisServerProcess?,
        prefix: String
    ) throws -> (any SessionStore, close: () -> Void) {
        switch self {
        case .memory:
            return (InMemorySessionStore(menu: menu), {})
        case .durable:
            let path = directory.path + "/\(prefix)\(round)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let durable = try DurableSessionStore(directory: path, menu: menu)
            return (durable, { durable.close() })
        case .redis:
            let instance = RedisSessionStore(
                endpoint: redis!.endpoint, options: RedisStoreOptions(prefix: "\(prefix)\(round):"),
                menu: MenuGeneration(menu))
            return (instance, { instance.stop() })
        }
    }
}
