import MenuSessions
import MenuSessionsDurable

/// Sessions in a data directory (`--data-dir`): the embedded durable store, its writes measured
/// (``MeasuredSessionStore``), its journal closed at shutdown.
///
/// Invariant: ``store`` wraps ``durable``; the description carries what recovery found at start.
package struct DurableSessionBackend: SessionBackend {
    package let durable: DurableSessionStore
    private let measured: MeasuredSessionStore
    package let description: String

    /// Opens (and recovers) the store in `directory`; a directory it cannot use throws ``StartupError/dataDirectory(_:)``.
    package init(
        directory: String, settings: ServerSettings, menu: MenuGeneration,
        log: @escaping @Sendable (String) -> Void
    ) throws(StartupError) {
        do {
            durable = try DurableSessionStore(
                directory: directory, menu: menu, fsync: settings.fsync, limits: settings.sessionLimits,
                storeTimeout: .seconds(settings.storeTimeoutSeconds), log: log)
        } catch {
            throw .dataDirectory(error)
        }
        measured = MeasuredSessionStore(durable)
        description =
            "sessions are kept in \(directory) (journal fsync: \(settings.fsync.rawValue)); " + durable.recovery.summary
    }

    package var store: any SessionStore { measured }
    package var sessionCounts: SessionCounts { durable.sessionCounts }
    package var storeFigures: MeasuredSessionStore.Figures { measured.figures }
    package func shutdown() { durable.close() }
}
