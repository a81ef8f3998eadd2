import DurableTestSupport
import Foundation
import MenuApp
import MenuTestSupport
import RedisClient

/// A contract server serving generation 1 of ``ReloadMenus`` from a config file of its own, which
/// ``reload(to:)`` rewrites and reloads: for the contract tests of what a reload does.
package struct ContractReloadableServer {
    package let directory = DurableTemporaryDirectory()
    package let server: ContractServer
    private let config: String

    /// Sessions in memory, with `onDisk` in the durable store in a directory beside the config,
    /// or with `redis` in that Redis.
    package init(over transport: ContractTransport, onDisk: Bool = false, redis: RedisEndpoint? = nil) throws {
        config = directory.file("menu.json")
        try ReloadMenus.write(generation: 1, to: config)
        let config = config
        let data = directory.file("data")
        if onDisk { try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false) }
        server = try transport.start { settings in
            settings.configPath = config
            if onDisk { settings.dataDirectory = data }
            if let redis { settings.store = .redis(redis) }
        }
    }

    /// Serves generation `k` from now on; true when the menu changed.
    package func reload(to k: Int) throws -> Bool {
        try ReloadMenus.write(generation: k, to: config)
        return try server.server.reload().changed
    }

    /// Serves the menu `json` describes from now on (written as a deployment would: a temporary
    /// file renamed over the config); true when the menu changed.
    package func reload(toJSON json: Data) throws -> Bool {
        let temporary = config + ".tmp"
        try json.write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, config) == 0 else { throw CocoaError(.fileWriteUnknown) }
        return try server.server.reload().changed
    }

    package func shutdown() {
        server.shutdown()
        directory.remove()
    }
}
