import Foundation
import Synchronization

/// The flat table of one session as a table view drives it: ``count``, ``row(at:)`` from a paged
/// cache that fetches what is missing in the background, ``rows(in:)`` that waits for them, and
/// the writes (toggle, set, reveal, expand or collapse all), each applied to the cache as the
/// server's splice and handed back as index paths.
///
/// Invariant: the cache is one state of the session's table: ``version`` and ``revision`` name
/// it, ``count`` is its row count, and every cached row is the row the server would send at that
/// position for that state (``RowCache``). A page fetched for another state is not installed;
/// the table moves from one revision to the next only by applying the server's splices, in
/// order, under one async lock (writes and catch-ups run one at a time), or drops every row
/// (``MenuTableEvent/reloaded(version:count:reason:)``).
///
/// Cost: ``row(at:)`` O(1) for a cached row, plus O(page size × pages looked at) to check the
/// neighbouring pages; a splice O(count) (``RowCache``); memory 8 bytes a row plus the rows fetched.
public final class MenuTable: Sendable {
    public let session: MenuSession
    /// Rows per `GET /rows` (1 to the server's `--max-limit`).
    public let pageSize: Int
    /// Pages fetched on each side of the one ``row(at:)`` asked for.
    public let prefetchPages: Int
    /// The section the index paths of ``MenuTableChange`` name.
    public let section: Int
    /// Attempts a write makes (each after catching up) before it throws ``MenuClientError/conflict(attempts:detail:)``.
    public static let maxWriteAttempts = 5
    /// Events not returned by a call: pages loaded, background catch-ups and reloads, in order.
    /// One consumer; the stream buffers what is not read yet (an event per page load at most), so
    /// an app reads it for as long as it shows the table.
    public let events: AsyncStream<MenuTableEvent>
    let eventSink: AsyncStream<MenuTableEvent>.Continuation
    let state: Mutex<State>
    let writes = AsyncSerialLock()

    struct State {
        var cache: RowCache
        var version: String
        var revision: Int
        var leafCount: Int
        /// The availability revision every cached row shows (the feed's `availabilitySince`).
        var availability = 0
        /// Bumped whenever positions change or rows are dropped; a page fetched in another epoch is not installed.
        var epoch = 0
        /// The page loads running for this epoch, by page number, for coalescing.
        var loading: [Int: (token: Int, task: Task<MenuClientError?, Never>)] = [:]
        var nextToken = 0
    }

    /// Opens the table of `session` (creating the session when it has none yet): reads its count.
    /// A restored session the server no longer has is recreated from its layout first
    /// (``MenuTableEvent/sessionRecreated(_:)`` is then the first of ``events``).
    public init(session: MenuSession, pageSize: Int = 50, prefetchPages: Int = 1, section: Int = 0)
        async throws(MenuClientError)
    {
        guard pageSize >= 1 else { throw .invalidArgument("pageSize must be at least 1, got \(pageSize)") }
        guard prefetchPages >= 0 else {
            throw .invalidArgument("prefetchPages must be 0 or more, got \(prefetchPages)")
        }
        self.session = session
        self.pageSize = pageSize
        self.prefetchPages = prefetchPages
        self.section = section
        (events, eventSink) = AsyncStream.makeStream(of: MenuTableEvent.self)
        var counted: MenuCountAnswer
        do {
            counted = try await Self.readCount(session)
        } catch .server(_, "unknown_session", _, _, _, _) {
            if let failedID = await session.id, let recreation = try await session.recreate(replacing: failedID) {
                eventSink.yield(.sessionRecreated(recreation))
            }
            counted = try await Self.readCount(session)
        }
        state = Mutex(
            State(
                cache: RowCache(count: counted.count), version: counted.version, revision: counted.revision,
                leafCount: counted.leafCount, availability: counted.availabilityRevision ?? 0))
    }

    deinit { eventSink.finish() }

    public var count: Int { state.withLock { $0.cache.count } }
    public var leafCount: Int { state.withLock { $0.leafCount } }
    /// The menu version the cached rows belong to.
    public var version: String { state.withLock { $0.version } }
    /// The session revision the cached rows belong to.
    public var revision: Int { state.withLock { $0.revision } }

    /// Every slot of the cache as it is now: the row, or nil for a placeholder.
    public var cachedRows: [MenuRow?] {
        state.withLock { state in (0 ..< state.cache.count).map { state.cache.row(at: $0) } }
    }

    /// The row at `index` if cached, else nil, fetching nothing.
    public func cachedRow(at index: Int) -> MenuRow? {
        state.withLock { $0.cache.row(at: index) }
    }

    /// The row at `index` if cached, else nil; either way the pages around it that are not fully
    /// cached are fetched in the background (``MenuTableEvent/rowsLoaded(rows:section:)`` when in).
    public func row(at index: Int) -> MenuRow? {
        state.withLock { state in
            guard index >= 0, index < state.cache.count else { return nil }
            let page = index / pageSize
            for neighbour in max(0, page - prefetchPages) ... page + prefetchPages
            where neighbour * pageSize < state.cache.count {
                _ = startLoad(page: neighbour, in: &state)
            }
            return state.cache.row(at: index)
        }
    }

    /// The rows of `range` that the table has (clamped to ``count``, which a change found in the
    /// background may have moved since the caller read it), fetched as needed (a page asked for
    /// twice is fetched once), all of one state of the table.
    public func rows(in requested: Range<Int>) async throws(MenuClientError) -> [MenuRow] {
        guard requested.lowerBound >= 0 else { throw .invalidArgument("rows \(requested) start before row 0") }
        var lastError: MenuClientError?
        for _ in 0 ..< 8 {
            let (rows, loads) = state.withLock { state -> ([MenuRow]?, [Task<MenuClientError?, Never>]) in
                let range = requested.clamped(to: 0 ..< state.cache.count)
                if state.cache.isFilled(range) { return (range.map { state.cache.row(at: $0)! }, []) }
                var loads: [Task<MenuClientError?, Never>] = []
                for page in range.lowerBound / pageSize ... max(range.lowerBound, range.upperBound - 1) / pageSize {
                    if let load = startLoad(page: page, in: &state) { loads.append(load) }
                }
                return (nil, loads)
            }
            if let rows { return rows }
            for load in loads { if let error = await load.value { lastError = error } }
        }
        throw lastError ?? .conflict(attempts: 8, detail: "rows \(requested) kept changing while they were fetched")
    }

    /// The load of `page` running for this epoch, started now if the page is not fully cached;
    /// nil when the page is cached.
    private func startLoad(page: Int, in state: inout State) -> Task<MenuClientError?, Never>? {
        if let running = state.loading[page] { return running.task }
        guard !state.cache.isFilled(page * pageSize ..< (page + 1) * pageSize) else { return nil }
        let token = state.nextToken
        state.nextToken += 1
        let task = Task { await self.load(page: page, token: token) }
        state.loading[page] = (token, task)
        return task
    }

    /// Fetches `page` and installs it if the table is still at the state it was fetched for. A page
    /// from a later state (another device wrote, the menu was reloaded) starts a catch-up first.
    private func load(page: Int, token: Int) async -> MenuClientError? {
        defer { state.withLock { if $0.loading[page]?.token == token { $0.loading[page] = nil } } }
        let (epoch, revision) = state.withLock { ($0.epoch, $0.revision) }
        do throws(MenuClientError) {
            let (answer, sessionID) = try await session.send(
                "GET", "rows", query: [("offset", String(page * pageSize)), ("limit", String(pageSize))])
            guard answer.status == 200 else {
                if answer.error.code == "unknown_session" { await catchUpInBackground(recovering: sessionID) }
                throw answer.error
            }
            let rows = try answer.decode(MenuRowsAnswer.self)
            let installed = state.withLock { state in
                guard state.epoch == epoch, rows.version == state.version, rows.revision == state.revision,
                    rows.count == state.cache.count
                else { return false }
                state.cache.install(rows.rows, at: rows.offset)
                return true
            }
            if installed {
                eventSink.yield(.rowsLoaded(rows: rows.offset ..< rows.offset + rows.rows.count, section: section))
                // Availability changed since the rows held were read: the feed names those to read again.
                if rows.availabilityRevision ?? 0 != state.withLock({ $0.availability }) {
                    await catchUpInBackground(recovering: nil)
                }
            } else if rows.version != version || rows.revision > revision {
                // The session moved on (another device, a reload): catch up before anyone asks again.
                await catchUpInBackground(recovering: nil)
            }
            return nil
        } catch {
            eventSink.yield(.loadFailed(error))
            return error
        }
    }

    /// A catch-up (or, for `failedID`, a new session) found by a page load; what it finds goes to ``events``.
    private func catchUpInBackground(recovering failedID: String?) async {
        do throws(MenuClientError) {
            let found = try await writes.withLock { () async throws(MenuClientError) -> [MenuTableEvent] in
                if let failedID { return try await recoverLocked(failedID: failedID) }
                return try await revalidateLocked()
            }
            for event in found { eventSink.yield(event) }
        } catch {
            eventSink.yield(.loadFailed(error))
        }
    }

    static func readCount(_ session: MenuSession) async throws(MenuClientError) -> MenuCountAnswer {
        let (answer, _) = try await session.send("GET", "count")
        guard answer.status == 200 else { throw answer.error }
        return try answer.decode(MenuCountAnswer.self)
    }
}
