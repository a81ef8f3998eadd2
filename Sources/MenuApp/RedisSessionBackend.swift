import MenuSessions
import MenuSessionsRedis
import Metrics
import RedisClient

/// Sessions in a Redis server several instances share (`--store redis://…`): its calls measured
/// (``MeasuredSessionStore``), its pipeline's batches reported, its threads stopped at shutdown.
///
/// Invariant: ``store`` wraps ``redis``; the session counts ask Redis, the evictions are this
/// process's own (``RedisSessionStore/evictedHere``).
package struct RedisSessionBackend: SessionBackend {
    package let redis: RedisSessionStore
    private let measured: MeasuredSessionStore
    private let pipelined: Bool
    package let description: String

    package init(endpoint: RedisEndpoint, settings: ServerSettings, menu: MenuGeneration) {
        redis = RedisSessionStore(endpoint: endpoint, options: settings.redisStoreOptions, menu: menu)
        measured = MeasuredSessionStore(redis)
        pipelined = settings.redisPipeline
        description = settings.redisStorageDescription(endpoint)
    }

    package var store: any SessionStore { measured }
    package var sessionCounts: SessionCounts { redis.sessionCounts }
    package var evictedHere: Int { redis.evictedHere }
    package var storeFigures: MeasuredSessionStore.Figures { measured.figures }

    /// With `--redis-pipeline`, the batches the write pipeline sent and the writes they carried.
    package func writeMetrics(to out: inout PrometheusText) {
        guard pipelined else { return }
        let figures = redis.pipelineFigures
        out.single(
            "menu_redis_pipeline_batches_total", .counter,
            help: "Batches of session writes sent to Redis through the write pipeline (--redis-pipeline).",
            figures.batches)
        out.single(
            "menu_redis_pipeline_writes_total", .counter,
            help: "Session writes those batches carried: divided by the batches, the mean batch.", figures.commands)
    }

    package func shutdown() { redis.stop() }
}
