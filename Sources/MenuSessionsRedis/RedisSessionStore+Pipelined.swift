import Dispatch
import MenuModel
import MenuSessions
import RedisClient
import Synchronization

/// Writes that do not hold the calling thread: the common write (a session this instance holds
/// a recent copy of, a command that changes it) is computed here as ``apply(_:to:in:if:)``
/// computes it, and its compare-and-set script goes out through the ``RedisPipeline``, batched
/// with the writes of other requests; the reply finishes it on the pipeline's thread. A write of
/// a session whose previous write is still in flight here follows that one without holding its
/// caller. Everything else (no copy here, a refusal or a no-op to decide on a fresh copy, another
/// instance's write first) goes to ``apply(_:to:in:if:)``, which reads and retries as it always has.
extension RedisSessionStore: PipelinedSessionStore {
    package func startApply(
        _ command: SessionCommand, to id: SessionID, in menu: MenuGeneration, if condition: RevisionCondition?,
        then completion: @escaping @Sendable (PipelinedWrite) -> Void
    ) -> Bool {
        guard let pipeline else { return false }
        latest.note(menu)
        // Writes of one session on this instance go one at a time. A write arriving while one is
        // in flight follows it: it is computed on the copy that write leaves, on the thread that
        // hands the gate over, and goes out with the next batch; the caller's thread is not held.
        let gate = writeGate(of: id)
        // Holding the gate: sends the write, or gives the gate back when it is not one to pipeline.
        let begin: @Sendable () -> Bool = { [self] in
            guard let write = pendingWrite(command, to: id, in: menu, if: condition) else {
                gate.release()
                return false
            }
            send(write, through: pipeline, releasing: gate, then: completion)
            return true
        }
        guard gate.acquire(orWhenFree: { if !begin() { completion(.notWritten) } }) else { return true }
        return begin()
    }

    /// A write computed and ready to go out.
    private struct PendingWrite: Sendable {
        let id: SessionID
        let menu: MenuGeneration
        let record: RedisSessionRecord
        let state: SessionState
        let change: CommandChange
        let arguments: [[UInt8]]
    }

    /// The write of `command` on this instance's copy of the session, or nil when it is not one
    /// to pipeline (no copy, a refusal, a no-op, the menu's own refusal: `apply` decides those).
    private func pendingWrite(
        _ command: SessionCommand, to id: SessionID, in menu: MenuGeneration,
        if condition: RevisionCondition?
    ) -> PendingWrite? {
        guard let session = cache?.value(of: id) ?? writeBasis.value(of: id), !carryIsDue(session.record, in: menu)
        else { return nil }  // a carry-over to `menu` first: `apply` writes it
        let revision = session.record.revision
        if let condition, !condition.admits(revision) { return nil }
        guard let state = try? state(of: session, id: id, in: menu) else { return nil }
        var view = FlattenedView(menu: menu.menu, state: state)
        guard
            let outcome = try? command.run(
                on: &view, maxChangedGroups: options.maxChangedGroups, maxStateBytes: options.maxStateBytes),
            outcome.changedState
        else {
            return nil
        }
        let encoded = RedisSessionRecord.encodeState(view.state.portable(in: menu.menu))
        let record = session.record.advanced(
            to: encoded, entry: outcome.change.historyEntry, menuVersion: menu.menu.version,
            historyLimit: options.historyLimit)
        return PendingWrite(
            id: id, menu: menu, record: record, state: view.state, change: outcome.change,
            arguments: writeArguments(
                record, entry: RedisHistory.entry(outcome.change.historyEntry), over: revision, in: menu))
    }

    /// Hands `write`'s script to the pipeline; its reply updates the cache and the write basis,
    /// gives the gate back (to the next write of the session, if one waits) and calls `completion`.
    private func send(
        _ write: PendingWrite, through pipeline: RedisPipeline, releasing gate: WriteGate,
        then completion: @escaping @Sendable (PipelinedWrite) -> Void
    ) {
        // The cache placeholder is put in on the pipeline's thread right before the batch goes out,
        // so in the order the commands reach Redis (see `beginFill(of:in:on:)`).
        let placeholder = FillBox()
        var prepare: (@Sendable (RedisConnection) throws(RedisError) -> Bool)?
        if let cache {
            let id = write.id
            prepare = { connection throws(RedisError) -> Bool in
                let (fill, tracked) = try RedisSessionStore.beginFill(of: id, in: cache, on: connection)
                placeholder.fill = fill
                return tracked
            }
        }
        pipeline.submit(
            .script(Self.writeScript, keys: scriptKeys(key(of: write.id)), arguments: write.arguments), prepare: prepare
        ) { [self] result in
            let fill = placeholder.fill
            let outcome: PipelinedWrite
            switch result {
            case .failure(let error):
                fill.map { cache?.cancelFill($0) }
                outcome = .failed(unavailable(error))
            case .success(let answer):
                if case .error(let message) = answer.reply, message.hasPrefix("NOSCRIPT") {
                    fill.map { cache?.cancelFill($0) }
                    outcome = .notWritten  // `apply` loads the script again
                } else {
                    do throws(SessionStoreError) {
                        switch try finishWrite(
                            answer.reply, tracked: answer.prepared, fill: fill, write.record, of: write.id,
                            over: write.record.revision - 1, state: write.state, in: write.menu)
                        {
                        case .written:
                            outcome = .applied(
                                AppliedChange(
                                    sessionID: write.id, created: false, change: write.change, state: write.state,
                                    revision: write.record.revision))
                        case .missing: outcome = .failed(.unknownSession)
                        case .moved: outcome = .notWritten  // another instance wrote first: `apply` computes it again on its record
                        }
                    } catch {
                        outcome = .failed(error)
                    }
                }
            }
            completion(outcome)
            gate.release()
        }
    }

    /// The pipeline's batches and the writes they carried so far (zeros without a pipeline).
    package var pipelineFigures: (batches: Int, commands: Int) { pipeline?.figures ?? (0, 0) }
}

/// A pipelined write's cache placeholder, put in by its `prepare` step on the pipeline's thread
/// and read by its completion on the same thread.
private final class FillBox: Sendable {
    private let stored = Mutex<SessionCache<RedisSessionStore.CachedSession>.Fill?>(nil)
    var fill: SessionCache<RedisSessionStore.CachedSession>.Fill? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
