import MenuSessions

/// Sessions in this process's memory only (no `--data-dir`, `--store memory`): lost on restart.
///
/// Invariant: the store is the ``InMemorySessionStore`` itself, unmeasured; nothing to let go of.
package struct MemorySessionBackend: SessionBackend {
    private let memory: InMemorySessionStore

    package init(settings: ServerSettings, menu: MenuGeneration) {
        memory = InMemorySessionStore(menu: menu, limits: settings.sessionLimits)
    }

    package var store: any SessionStore { memory }
    package var description: String { "sessions are kept in memory only; they are lost on restart" }
    package var sessionCounts: SessionCounts { memory.sessionCounts }
}
