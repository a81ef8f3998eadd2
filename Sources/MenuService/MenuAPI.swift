import Dispatch
import HTTPCore
import MenuAvailability
import MenuModel
import MenuSessions
import Synchronization

/// The HTTP contract of menu-server as a pure function: request value in, response value out.
/// No socket, no C; safe to call from many threads at once (each menu and its encoded rows are
/// immutable, the store synchronizes itself, and no lock is held while JSON is written).
///
/// Reload: ``install(_:)`` replaces the menu served. Each request takes the current
/// ``ServedMenu`` once (a lock held for one pointer copy) and answers entirely from it, so a
/// response never mixes two menus; the store hands back states for exactly that menu. A request
/// whose session another request already carried to a newer menu starts again on the newer one.
package final class MenuAPI: Sendable {
    package let store: any SessionStore
    /// `store` when it can start a write without holding the calling thread: a write endpoint
    /// then answers a ``DeferredResponse`` (``reply(to:route:)``).
    private let pipelinedStore: (any PipelinedSessionStore)?
    package let maxLimit: Int
    /// Limits session creation per client address; nil: no limit.
    package let sessionRateLimiter: SessionRateLimiter?
    /// The proxy whose `X-Forwarded-For` names the client (``HTTPRequest/clientAddress(trustedProxy:)``).
    package let trustedProxy: IPAddress?
    /// The other origins a browser may call the API from (`--cors-origin`); nil: none.
    package let crossOriginPolicy: CrossOriginPolicy?
    /// The page size when a request names no `limit` (or `maxLimit` when that is smaller).
    package static let defaultLimit = 50
    /// Search cache misses built at once unless the server is told otherwise (`--search-builds`):
    /// one, so on the two cores the server is planned for a flood of distinct queries leaves a
    /// core to everything else.
    package static let defaultSearchBuilds = 1
    /// Bounds the filtered views built at once (``SearchBuildSlots``).
    package let searchSlots: SearchBuildSlots
    /// The largest `limit` a client may ask for unless the server is told otherwise (`--max-limit`).
    package static let defaultMaxLimit = 500
    /// The values `maxLimit` may take.
    package static let maxLimitRange = 1 ... 100_000
    /// The largest request body the API accepts (its bodies are small JSON objects).
    /// The composition root gives it to the HTTP server, which answers 413 past it.
    package static let maxBodyBytes = 64 * 1024

    /// What `GET /metrics` answers; nil: 404 (metrics off, or served on a listener of their own).
    package let metricsPage: MetricsPage?

    /// Long polls of `GET /changes` waiting for their session's next write (`--max-streams`).
    package let changeWaits: ChangeWaits
    /// Waits held at once unless the server is told otherwise (`--max-streams`).
    package static let defaultMaxStreams = 10_000
    /// How often an event stream sends a comment when nothing else goes out (`--stream-heartbeat`):
    /// under the usual 60 s proxy read timeouts, and what finds a client that left.
    package static let defaultStreamHeartbeat = Duration.seconds(15)
    /// The heartbeat of event streams (``ChangeStream``).
    package let streamHeartbeat: Duration
    /// How long after a reload the sessions of a store that records reloads
    /// (``SessionStore/recordsReloads``) can read it as an entry of their feed
    /// (`--reload-entry-window`): the previous menu is kept that long, then freed; zero keeps
    /// none (feeds answer `410` from before a reload).
    package let reloadEntryWindow: Duration
    /// Long enough for every client that follows its feed, or comes back within minutes.
    package static let defaultReloadEntryWindow = Duration.seconds(600)
    /// The `Retry-After` of a wait refused at `--max-streams`: long enough that refused clients
    /// do not come back at once, all together.
    package static let streamRetrySeconds = 5

    /// The menu answered from; replaced whole by ``install(_:)``.
    private let served: Mutex<ServedMenu>
    /// Serializes ``install(_:)`` and changes of availability (never taken by requests).
    let installing = Mutex(())
    /// Where the availability overlay is kept besides memory (``AvailabilityKeeper``); nil: memory only.
    let availabilityKeeper: (any AvailabilityKeeper)?
    /// Ends `until` entries of the overlay when their time comes.
    let availabilityExpiry = AvailabilityExpiry()
    /// The time availability is judged at (entries' ends, opening hours): the system's clock,
    /// unless a test fixes it.
    let clock: @Sendable () -> Timestamp
    /// ``clock``'s reading.
    package var now: Timestamp { clock() }

    /// A service answering from the store's current menu. `maxLimit` must be in ``maxLimitRange``.
    package init(
        store: any SessionStore, maxLimit: Int = MenuAPI.defaultMaxLimit,
        searchSlots: SearchBuildSlots = SearchBuildSlots(limit: MenuAPI.defaultSearchBuilds),
        sessionRateLimiter: SessionRateLimiter? = nil, trustedProxy: IPAddress? = nil, metricsPage: MetricsPage? = nil,
        crossOriginPolicy: CrossOriginPolicy? = nil, maxStreams: Int = MenuAPI.defaultMaxStreams,
        streamHeartbeat: Duration = MenuAPI.defaultStreamHeartbeat,
        reloadEntryWindow: Duration = MenuAPI.defaultReloadEntryWindow,
        availabilityKeeper: (any AvailabilityKeeper)? = nil, clock: @escaping @Sendable () -> Timestamp = { .now }
    ) {
        self.clock = clock
        precondition(streamHeartbeat > .zero, "a stream heartbeat must be positive")
        precondition(reloadEntryWindow >= .zero, "a reload entry window cannot be negative")
        self.streamHeartbeat = streamHeartbeat
        self.reloadEntryWindow = reloadEntryWindow
        precondition(Self.maxLimitRange.contains(maxLimit), "maxLimit \(maxLimit) is outside \(Self.maxLimitRange)")
        changeWaits = ChangeWaits(limit: maxStreams)
        // Another instance's write (Redis) releases the long polls of its session here; news
        // missed (the store's link to Redis renewed) releases every one, to look again.
        let waits = changeWaits
        store.observeOtherWriters { news in
            switch news {
            case .session(let id): waits.notify(.session(id), revision: Int.max)
            case .everything: waits.releaseAll()
            }
        }
        self.metricsPage = metricsPage
        self.store = store
        pipelinedStore = store as? any PipelinedSessionStore
        self.maxLimit = maxLimit
        self.searchSlots = searchSlots
        self.sessionRateLimiter = sessionRateLimiter
        self.trustedProxy = trustedProxy
        self.crossOriginPolicy = crossOriginPolicy
        self.availabilityKeeper = availabilityKeeper
        let generation = store.currentMenu
        let kept = availabilityKeeper?.keptOverlay ?? AvailabilityOverlay()
        let (onMenu, dropped) = kept.keeping(nodesOf: generation.menu)
        // Served as of now: what was kept may be from before an opening or a closing.
        let first = ServedMenu(generation, availability: onMenu, droppedAtReload: dropped, now: clock())
        served = Mutex(first)
        let overlay = first.availability.overlay
        // Nodes the kept overlay hides leave the listing from the start (a generation after the store's).
        let hidden = ServedMenu.hiddenIDs(of: generation.menu, showing: overlay, hours: first.hours, now: clock())
        if !hidden.isEmpty {
            installing.withLock { _ in
                _ = installListing(of: generation.menu, hiding: hidden, availability: overlay, now: clock())
            }
        }
        if overlay != kept, let theirs = keepAvailability(overlay, over: kept.revision) { adoptAvailability(theirs) }
        scheduleAvailabilityExpiry()
        availabilityKeeper?.follow { [weak self] overlay in self?.adoptAvailability(overlay) }
    }

    /// A service answering from `menu`, which must be the menu `store` was made with.
    package convenience init(
        menu: Menu, store: any SessionStore, maxLimit: Int = MenuAPI.defaultMaxLimit,
        sessionRateLimiter: SessionRateLimiter? = nil, trustedProxy: IPAddress? = nil
    ) {
        precondition(
            store.currentMenu.menu.version == menu.version && store.currentMenu.menu.nodeCount == menu.nodeCount,
            "the store was made with another menu")
        self.init(store: store, maxLimit: maxLimit, sessionRateLimiter: sessionRateLimiter, trustedProxy: trustedProxy)
    }

    /// The menu requests are answered from now.
    package var current: ServedMenu { served.withLock { $0 } }
    /// Serves `menu` from now on (the current menu with another availability). Under ``installing``.
    func serve(_ menu: ServedMenu) { served.withLock { $0 = menu } }
    /// The menu served now.
    package var menu: Menu { current.generation.menu }

    /// Serves `menu` from now on: encodes its rows and builds the translation from the current
    /// menu (both O(nodes), before anything changes), then swaps the served menu in one step. A
    /// request already running finishes on the menu it started with; the old menu is freed when
    /// the last of them returns. Sessions are carried over by the store: lazily on their next
    /// use, and by ``SessionStore/adopt(_:)``, which the caller runs next, off the request path.
    /// For a store that records reload entries the old menu is kept ``reloadEntryWindow`` more
    /// (or until the next reload), for the entries' splices; `previousMenuFreed` runs once it is
    /// let go by the timer (where the caller hands the memory back to the system).
    @discardableResult
    package func install(_ menu: Menu, previousMenuFreed: @escaping @Sendable () -> Void = {}) -> MenuGeneration {
        installing.withLock { _ in
            let before = current.availability.overlay
            let (onMenu, dropped) = before.keeping(nodesOf: menu)
            let now = clock()
            let hidden = ServedMenu.hiddenIDs(of: menu, showing: onMenu, hours: MenuHours(menu: menu), now: now)
            let next = installListing(
                of: menu, hiding: hidden, availability: onMenu, droppedAtReload: dropped, now: now,
                previousMenuFreed: previousMenuFreed)
            let overlay = next.availability.overlay
            if overlay != before { keepAvailability(overlay, over: before.revision) }
            return next.generation
        }
    }

    /// Serves the listing of `published` without the subtrees of `hidden` (ids; none: `published`
    /// itself) as the next generation, with `overlay`: the work of a reload (under ``installing``).
    /// Sessions are carried over by id on their next use; every feed and stream is told.
    func installListing(
        of published: Menu, hiding hidden: [String], availability overlay: AvailabilityOverlay,
        droppedAtReload dropped: [String] = [], now: Timestamp, previousMenuFreed: @escaping @Sendable () -> Void = {}
    ) -> ServedMenu {
        let keeping = store.recordsReloads && reloadEntryWindow > .zero
        let listing = published.hiding(hidden.compactMap(published.node(withID:)))
        // Served as of now: the new menu's hours may close or open other nodes.
        let next = ServedMenu(
            current.generation.succeeded(by: listing, keepingPrevious: keeping), published: published,
            hiddenIDs: hidden, availability: overlay, droppedAtReload: dropped,
            availabilityHistory: current.availability.historyAfter, now: now)
        served.withLock { $0 = next }
        changeWaits.releaseAll()  // long polls and streams see the new version
        scheduleAvailabilityExpiry()
        if keeping {
            let window = reloadEntryWindow.components
            let nanoseconds = Int(window.seconds) * 1_000_000_000 + Int(window.attoseconds / 1_000_000_000)
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
                [weak epoch = next.generation.epoch] in
                guard let epoch else { return }
                epoch.forgetPreviousMenu()
                previousMenuFreed()
            }
        }
        return next
    }

    // MARK: Routing

    package func respond(to request: HTTPRequest) -> HTTPResponse {
        var route = -1
        return respond(to: request, route: &route)
    }

    /// ``respond(to:)``, also setting `route` to the index in ``Endpoint/routes`` of the route
    /// the path matched, or leaving it when none did (a CORS preflight is answered before routing).
    /// A write that went to the store without waiting is waited for on the calling thread.
    package func respond(to request: HTTPRequest, route: inout Int) -> HTTPResponse {
        reply(to: request, route: &route).waitForResponse()
    }

    /// What an HTTP server with an event loop calls: ``respond(to:route:)``, except that a write
    /// the store started without waiting (``PipelinedSessionStore``) answers a
    /// ``DeferredResponse``, ready when the store has answered, and made then.
    package func reply(to request: HTTPRequest, route: inout Int) -> HTTPReply {
        guard let policy = crossOriginPolicy else { return answer(request, route: &route) }
        if CrossOriginRequest.isPreflight(request) {
            do { return .response(try preflight(request, policy: policy)) } catch {
                var response = errorResponse(error)
                response.headers.append(("Vary", "Origin"))
                return .response(response)
            }
        }
        return answer(request, route: &route).map { [self] response in
            var response = response
            addCrossOriginHeaders(to: &response, for: request, policy: policy)
            return response
        }
    }

    private func answer(_ request: HTTPRequest, route: inout Int) -> HTTPReply {
        do {
            return try self.route(request, route: &route)
        } catch {
            return .response(errorResponse(error))
        }
    }

    /// The answer to a request the HTTP layer refused before routing.
    package func reject(_ rejection: HTTPRejection) -> HTTPResponse {
        switch rejection {
        case .payloadTooLarge(let limit): errorResponse(.payloadTooLarge(limit: limit))
        case .conflictingContentLength: errorResponse(.badRequest("conflicting or invalid Content-Length headers"))
        case .contentLengthWithChunked:
            errorResponse(.badRequest("Content-Length together with Transfer-Encoding is not allowed"))
        case .unsupportedTransferEncoding:
            errorResponse(
                .notImplemented("only Transfer-Encoding: chunked is supported (one header, exactly that value)"))
        case .transferEncodingInHTTP10:
            errorResponse(.badRequest("Transfer-Encoding is not allowed in an HTTP/1.0 request"))
        case .duplicateHost: errorResponse(.badRequest("more than one Host header"))
        case .missingHost: errorResponse(.badRequest("an HTTP/1.1 request needs a Host header"))
        case .invalidRequestTarget:
            errorResponse(.badRequest("the request target has whitespace or a control byte in it; percent-encode it"))
        case .malformedHeaderName(let name):
            errorResponse(
                .badRequest(
                    "header name \(String(reflecting: name)) is not a token: a space, tab, colon, control or non-ASCII "
                        + "byte in it (whitespace before the colon, or a folded continuation line); send each header as one name: value line"
                ))
        case .serverStopping: errorResponse(.stopping)
        case .tooManyStreamsFromAddress(let limit): errorResponse(.tooManyStreamsFromAddress(limit: limit))
        }
    }

    /// Answers the endpoint ``Endpoint/routes`` finds for `request` (404, 405 and an unknown query
    /// parameter are refused there, before any handler runs).
    private func route(_ request: HTTPRequest, route: inout Int) throws(APIError) -> HTTPReply {
        switch try Endpoint(routing: request, route: &route) {
        case .rows: return .response(try rows(request))
        case .count: return .response(try count(request))
        case .menu: return .response(try menuSummary(request))
        case .search: return .response(try search(request))
        case .changes: return try changes(request)
        case .health: return .response(json(200, Self.healthBody))
        case .readiness: return .response(try readiness())
        case .createSession: return .response(try createSession(request))
        case .session: return .response(try session(request))
        case .deleteSession: return .response(try deleteSession(request))
        case .toggleGroup(let id): return try change(.toggle(groupID: id), request)
        case .setGroupExpansion(let id):
            let body = try Self.parseExpansionBody(request.body)
            return try change(
                body.recursive
                    ? .setSubtree(groupID: id, isExpanded: body.isExpanded)
                    : .set(groupID: id, isExpanded: body.isExpanded), request)
        case .setAllExpansion: return try change(.setAll(try Self.parseAllExpansionBody(request.body)), request)
        case .node(let id): return .response(try node(id, request))
        case .revealNode(let id): return try change(.reveal(nodeID: id), request)
        case .selectNode(let id): return try change(try selectionCommand(forNode: id, request), request)
        case .setAllSelection: return try change(try selectAllCommand(request), request)
        case .selection: return .response(try selection(request))
        case .metrics:
            guard let metricsPage else { throw .notFound(path: "/metrics") }
            return .response(metricsPage.response())
        case .webPage: return .response(try webAsset(.page, request))
        case .webScript: return .response(try webAsset(.script, request))
        case .webStyle: return .response(try webAsset(.style, request))
        }
    }

    // MARK: Endpoints

    private func rows(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let anchor = try PageAnchor(of: request)
        let limit = try Self.integerParameter(
            "limit", in: request, default: min(Self.defaultLimit, maxLimit), range: 1 ... maxLimit)
        if let query = try SearchParameters.query(of: request) {
            return try filteredRows(request, query, anchor: anchor, limit: limit)
        }
        let ancestors = try Self.booleanParameter("ancestors", in: request, default: false)
        let context = try readContext(of: request)
        if let unchanged = try notModified(request, context) { return unchanged }
        let view = context.view
        let (offset, pageRows) = try anchor.page(in: view, limit: limit)
        let rowCount = max(0, min(pageRows, view.count - offset))
        var writer = JSONWriter(capacity: 160 + rowCount * 128)
        writeCounts(view, revision: context.session.revision, of: context.menu, to: &writer)
        writePlace(offset: offset, limit: limit, to: &writer)
        writer.raw(",\"rows\":")
        let (encoded, marks) = (context.menu.encoded[context.locale], context.menu.availability.marks)
        encoded.writeRows(
            of: view, offset: offset, limit: pageRows, marks: marks, selection: context.rowSelection, to: &writer)
        if ancestors {
            writer.raw(",\"ancestors\":")
            encoded.writeAncestorRows(
                of: view, above: offset, marks: marks, selection: context.rowSelection, to: &writer)
        }
        writer.raw("}")
        return read(writer.finish(), context)
    }

    private func count(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        if let query = try SearchParameters.query(of: request) { return try filteredCount(request, query) }
        let context = try readContext(of: request)
        if let unchanged = try notModified(request, context) { return unchanged }
        var writer = JSONWriter(capacity: 96)
        writeCounts(context.view, revision: context.session.revision, of: context.menu, to: &writer)
        writer.raw("}")
        return read(writer.finish(), context)
    }

    /// Writes `{"version":…,"revision":…,"count":…,"leafCount":…` (object left open).
    private func writeCounts(_ view: FlattenedView, revision: Int, of menu: ServedMenu, to writer: inout JSONWriter) {
        writeCounts(count: view.count, leafCount: view.leafCount, revision: revision, of: menu, to: &writer)
    }

    /// `{"version","id","index","path","row"}`: the node's row when visible (`index` and `row`
    /// null when hidden) and its ancestors' ids from the top. O(depth · log m).
    private func node(_ id: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let context = try readContext(of: request)
        let (menu, view) = (context.menu, context.view)
        guard let node = view.menu.node(withID: id) else { throw .unknownNode(id: id) }
        let index = view.index(ofNode: node)
        var writer = JSONWriter(capacity: 512)
        writer.raw("{\"version\":")
        writer.raw(menu.versionJSON)
        writer.raw(",\"id\":")
        writer.string(id)
        writer.raw(",\"index\":")
        if let index { writer.integer(index) } else { writer.raw("null") }
        writer.raw(",\"path\":")
        Self.writeIDs(view.ancestors(of: node).map(view.menu.id(of:)), to: &writer)
        writer.raw(",\"row\":")
        if let index {
            menu.encoded[context.locale].writeRow(
                of: view, at: index, marks: menu.availability.marks, selection: context.rowSelection, to: &writer)
        } else {
            writer.raw("null")
        }
        writer.raw("}")
        return json(200, writer.finish(), extraHeaders: context.languageHeaders)
    }

    /// `ids` as a JSON array of strings (a node's path).
    static func writeIDs(_ ids: [String], to writer: inout JSONWriter) {
        writer.raw("[")
        for (position, id) in ids.enumerated() {
            if position > 0 { writer.raw(",") }
            writer.string(id)
        }
        writer.raw("]")
    }

    /// A write: started without waiting when the store can (``PipelinedSessionStore``; then a
    /// ``DeferredResponse``, made when the store has answered), else applied now.
    private func change(_ command: SessionCommand, _ request: HTTPRequest) throws(APIError) -> HTTPReply {
        let session = try sessionID(in: request)
        let ifMatch = try writeCondition(of: request)
        if session == nil { try admitCreation(request) }
        guard let session, let pipelinedStore else { return .response(try applyNow(command, to: session, if: ifMatch)) }
        let menu = current
        // A conditional write to a target the menu lacks fails as it would without its condition.
        if ifMatch != nil {
            do { try command.checkTarget(in: menu.generation.menu) } catch { throw APIError(error) }
        }
        let outcome = PipelinedOutcome()
        let deferred = DeferredResponse { [self] in
            switch outcome.value {
            case .applied(let applied): return changeResponse(applied, on: menu)
            case .failed(let error): return errorResponse(APIError(error))
            case .notWritten, nil:  // decided again, waiting, on a copy read from the store
                do throws(APIError) { return try applyNow(command, to: session, if: ifMatch) } catch {
                    return errorResponse(error)
                }
            }
        }
        let condition = ifMatch?.revisionCondition(prefixes: menu.entityTagPrefixes)
        let started = pipelinedStore.startApply(command, to: session, in: menu.generation, if: condition) { write in
            outcome.value = write
            deferred.ready()
        }
        return started ? .deferred(deferred) : .response(try applyNow(command, to: session, if: ifMatch))
    }

    /// A write applied on the calling thread (waiting for the store), on the served menu.
    private func applyNow(_ command: SessionCommand, to session: SessionID?, if ifMatch: EntityTagCondition?)
        throws(APIError) -> HTTPResponse
    {
        let (menu, applied) = try onServedMenu { menu throws(SessionStoreError) in
            // A conditional write to a target the menu lacks fails as it would without its condition.
            if ifMatch != nil { try command.checkTarget(in: menu.generation.menu) }
            return try apply(command, to: session, in: menu, if: ifMatch)
        }
        return changeResponse(applied, on: menu)
    }

    /// The answer to a write that was applied: the change, the counts after it, the row splice.
    private func changeResponse(_ applied: AppliedChange, on menu: ServedMenu) -> HTTPResponse {
        changeWaits.notify(.session(applied.sessionID), revision: applied.revision)
        let view = FlattenedView(menu: menu.generation.menu, state: applied.state)
        var writer = JSONWriter(capacity: 256)
        writer.raw("{\"version\":")
        writer.raw(menu.versionJSON)
        writer.raw(",\"revision\":")
        writer.integer(applied.revision)
        writer.raw(",\"sessionId\":")
        writer.string(applied.sessionID.text)
        switch applied.change {
        case .group(let change):
            writer.raw(",\"id\":")
            writer.string(change.id)
            writer.raw(",\"isExpanded\":")
            writer.bool(change.isExpanded)
            writer.raw(",\"index\":")
            if let index = change.index { writer.integer(index) } else { writer.raw("null") }
        case .all(let reset):
            writer.raw(",\"all\":")
            writer.string(reset.mode.rawValue)
        case .selection(let change):
            writeSelectionChange(change, in: menu.generation.menu, to: &writer)
        }
        writer.raw(",\"count\":")
        writer.integer(view.count)
        writer.raw(",\"leafCount\":")
        writer.integer(view.leafCount)
        writer.raw(",\"change\":")
        Self.write(applied.change.splice, to: &writer)
        writer.raw("}")
        return json(200, writer.finish(), extraHeaders: [("X-Session-Id", applied.sessionID.text)])
    }

    // MARK: Inputs

    /// The session named by `X-Session-Id`, nil when the header is absent. A name that only starts
    /// with `x-session-id` is a mangled session header (libmicrohttpd 0.9.75 keeps a space before the
    /// colon in the name and glues an obs-fold continuation line onto it): `invalid_session`, not
    /// silently the default expansion.
    func sessionID(in request: HTTPRequest) throws(APIError) -> SessionID? {
        let headers = request.headers
        var found: SessionID?
        for position in headers.indices where headers.name(at: position, hasPrefix: "x-session-id") {
            // Repeated headers must agree, and a mangled name is no session header at all.
            guard headers.name(at: position, equals: "x-session-id"),
                let id = headers.withValue(at: position, { $0.flatMap(SessionID.init(utf8:)) }),
                found == nil || found == id
            else { throw .invalidSession }
            found = id
        }
        return found
    }

    /// Refuses a request that would create a session when its client has used up its
    /// `--session-rate` (429 `rate_limited` with `Retry-After`). A request without a peer address
    /// (made in-process) is not limited.
    func admitCreation(_ request: HTTPRequest) throws(APIError) {
        guard let limiter = sessionRateLimiter, let client = request.clientAddress(trustedProxy: trustedProxy) else {
            return
        }
        if let wait = limiter.admit(client) {
            throw .rateLimited(perMinute: limiter.perMinute, retryAfterSeconds: wait)
        }
    }

    /// The menu a read answers from and the expansion it uses with its revision: the session's,
    /// or the menu's default (revision 0) when none is named.
    func servedState(for request: HTTPRequest) throws(APIError) -> (ServedMenu, SessionSnapshot) {
        guard let id = try sessionID(in: request) else {
            return (current, SessionSnapshot(state: SessionState(), revision: 0))
        }
        return try snapshot(of: id, for: request)
    }

    /// Runs the store call `body` on the current menu, and again on the newer one each time the
    /// session turns out to be on a newer menu already (a reload while the request ran; at most
    /// once per reload). Returns the menu the result belongs to.
    func onServedMenu<Result>(
        _ body: (ServedMenu) throws(SessionStoreError) -> Result
    ) throws(APIError) -> (menu: ServedMenu, result: Result) {
        while true {
            let menu = current
            do {
                return (menu, try body(menu))
            } catch .menuChanged {
                continue
            } catch {
                throw APIError(error)
            }
        }
    }

    /// A decimal integer query parameter: digits only (no sign, fraction, exponent or spaces).
    static func integerParameter(
        _ name: StaticString, in request: HTTPRequest, default fallback: Int,
        range: ClosedRange<Int>
    ) throws(APIError) -> Int {
        let query = request.query
        var found: Int?
        for position in query.indices where query.name(at: position, equals: name) {
            guard found == nil else {
                throw .invalidParameter(
                    "\(name) given more than once; \(name) must be an integer from \(range.lowerBound) to \(range.upperBound)"
                )
            }
            found = position
        }
        guard let position = found else { return fallback }
        let parsed: Int? = query.withValue(at: position) { bytes in
            guard let bytes, !bytes.isEmpty, bytes.count <= 19 else { return nil }
            var value = 0
            for byte in bytes {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                guard !overflow1, !overflow2 else { return nil }
                value = sum
            }
            return value
        }
        guard let value = parsed, range.contains(value) else {
            let given = query.value(at: position).map { String($0.prefix(40)) } ?? ""
            throw .invalidParameter(
                "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound), got \"\(given)\"")
        }
        return value
    }

    /// The query parameter `name` as `true` or `false` (exactly those words), `fallback` when
    /// absent; anything else, or the name given twice, is a 400 naming it.
    static func booleanParameter(_ name: StaticString, in request: HTTPRequest, default fallback: Bool)
        throws(APIError) -> Bool
    {
        let query = request.query
        guard let position = query.firstIndex(named: name) else { return fallback }
        guard query.count(named: name) == 1 else {
            throw .invalidParameter("\(name) given more than once; \(name) must be true or false")
        }
        let value: Bool? = query.withValue(at: position) { bytes in
            guard let bytes else { return nil }
            if bytes.elementsEqual("true".utf8) { return true }
            if bytes.elementsEqual("false".utf8) { return false }
            return nil
        }
        guard let value else {
            let given = query.value(at: position).map { String($0.prefix(40)) } ?? ""
            throw .invalidParameter("\(name) must be true or false, got \"\(given)\"")
        }
        return value
    }

    /// `{"isExpanded": true|false, "recursive": true|false}` (`recursive` optional); other keys
    /// are ignored, a key given twice is refused (``ExpansionBodyParser``).
    package static func parseExpansionBody(_ body: [UInt8]) throws(APIError) -> (isExpanded: Bool, recursive: Bool) {
        do {
            let parsed = try ExpansionBodyParser.parse(body)
            return (parsed.isExpanded, parsed.recursive)
        } catch {
            throw .invalidBody(error.message(for: .group))
        }
    }

    /// `{"selected": true|false}` (`PUT /nodes/{id}/selection`) or `{"all": true|false}` (`PUT
    /// /selection`, `all` true), as strictly as ``parseExpansionBody(_:)``.
    package static func parseSelectionBody(_ body: [UInt8], all: Bool) throws(APIError) -> Bool {
        let kind: ExpansionBodyParser.Body = all ? .allSelection : .nodeSelection
        do {
            return try ExpansionBodyParser.parseSelection(body, of: kind)
        } catch {
            throw .invalidBody(error.message(for: kind))
        }
    }

    /// `{"all": "expanded"|"collapsed"|"default"}`, as strictly as ``parseExpansionBody(_:)``.
    package static func parseAllExpansionBody(_ body: [UInt8]) throws(APIError) -> ExpansionMode {
        do {
            return try ExpansionBodyParser.parseAll(body)
        } catch {
            throw .invalidBody(error.message(for: .all))
        }
    }

    // MARK: Responses

    /// The headers of every JSON response, built once.
    private static let jsonHeaders: [(name: String, value: String)] = [
        ("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-store")
    ]

    private static let healthBody = Array(#"{"status":"ok"}"#.utf8)

    private func json(_ status: Int, _ body: [UInt8], extraHeaders: [(name: String, value: String)] = [])
        -> HTTPResponse
    {
        HTTPResponse(
            status: status, headers: extraHeaders.isEmpty ? Self.jsonHeaders : Self.jsonHeaders + extraHeaders,
            body: body)
    }

    func json(_ status: Int, _ body: ResponseBody, extraHeaders: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: extraHeaders.isEmpty ? Self.jsonHeaders : Self.jsonHeaders + extraHeaders,
            body: body)
    }

    func errorResponse(_ given: APIError) -> HTTPResponse {
        let error = hiddenInstead(of: given)
        var writer = JSONWriter(capacity: 160)
        writer.raw("{\"error\":{\"code\":")
        writer.string(error.code)
        writer.raw(",\"message\":")
        writer.string(error.message)
        if case .notVisible(_, let path) = error {
            writer.raw(",\"path\":")
            Self.writeIDs(path, to: &writer)
        }
        if case .selectionAboveMaximum(let group, let max, let selected) = error {
            writer.raw(",\"group\":")
            writer.string(group)
            writer.raw(",\"maxSelect\":")
            writer.integer(max)
            writer.raw(",\"selected\":")
            writer.integer(selected)
        }
        writer.raw("}")
        if case .preconditionFailed(let revision) = error {
            writer.raw(",\"revision\":")
            writer.integer(revision)
        }
        writer.raw("}")
        var headers: [(name: String, value: String)] = []
        switch error {
        case .methodNotAllowed(_, let allowed): headers.append(("Allow", allowed.joined(separator: ", ")))
        case .tooManySessions(_, let retry), .sessionMemoryFull(_, let retry), .rateLimited(_, let retry):
            headers.append(("Retry-After", String(retry)))
        case .unavailable, .searchBusy, .instantBusy, .stopping: headers.append(("Retry-After", "1"))
        case .tooManyStreams: headers.append(("Retry-After", String(Self.streamRetrySeconds)))
        default: break
        }
        return json(error.status, writer.finish(), extraHeaders: headers)
    }
}

extension MenuAPI {
    /// `error`, or when it names an id the listing lacks but the published menu has (a node
    /// hidden while unavailable), ``APIError/hiddenNode(id:group:)``, which says so. O(1).
    private func hiddenInstead(of error: APIError) -> APIError {
        let id: String
        switch error {
        case .unknownGroup(let named), .unknownNode(let named): id = named
        default: return error
        }
        let menu = current
        guard !menu.hiddenIDs.isEmpty, let node = menu.published.node(withID: id) else { return error }
        guard menu.generation.menu.node(withID: id) == nil else { return error }
        if case .unknownGroup = error, !menu.published.isGroup(node) { return error }
        return .hiddenNode(id: id, group: menu.published.isGroup(node))
    }
}

/// Where a pipelined write's outcome waits for the deferred response that reads it: set once by
/// the store's completion (before the response is made ready), read once when it is made.
private final class PipelinedOutcome: Sendable {
    private let stored = Mutex<PipelinedWrite?>(nil)
    var value: PipelinedWrite? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
