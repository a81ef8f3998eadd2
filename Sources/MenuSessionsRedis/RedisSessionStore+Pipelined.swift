import Dispatch
import MenuModel
import MenuSessions
import RedisClient

/// Writes that do not hold the calling thread: the common write (a session this instance holds
/// a recent copy of, a command that changes it) is computed here as ``apply(_:to:in:if:)``
/// computes it, and its compare-and-set script goes out through the ``RedisPipeline``, batched
/// with the writes of other requests; the reply finishes it on the pipeline's thread. Everything
/// else (no copy here, a refusal or a no-op to decide on a fresh copy, another write of the
/// session in flight here, another instance's write first) goes to ``apply(_:to:in:if:)``, which
/// reads and retries as it always has.
extension RedisSessionStore: PipelinedSessionStore {
    package func startApply(_ command: ExpansionCommand, to id: SessionID, in menu: MenuGeneration, if condition: RevisionCondition?,
                            then completion: @escaping @Sendable (PipelinedWrite) -> Void) -> Bool {
        guard let pipeline else { return false }
        latest.note(menu)
        // Writes of one session on this instance go one at a time: a write in flight makes this
        // one wait its turn in `apply` (the gate is given back once the reply is handled).
        let gate = writeGate(of: id)
        guard gate.wait(timeout: .now()) == .success else { return false }
        var started = false
        defer { if !started { gate.signal() } }
        guard let session = cache?.value(of: id) ?? writeBasis.value(of: id) else { return false }
        let revision = session.record.revision
        if let condition, !condition.admits(revision) { return false }
        guard let state = try? state(of: session, id: id, in: menu) else { return false }
        var view = FlattenedView(menu: menu.menu, state: state)
        guard let outcome = try? command.run(on: &view, maxChangedGroups: options.maxChangedGroups), outcome.changedState else {
            return false
        }
        let newState = view.state
        let encoded = RedisSessionRecord.encodeState(newState.portable(in: menu.menu))
        let record = session.record.advanced(to: encoded, change: outcome.change.splice, menuVersion: menu.menu.version,
                                             historyLimit: options.historyLimit)
        let arguments = writeArguments(record, entry: RedisHistory.entry(outcome.change.splice), over: revision, in: menu)
        let fill = cache?.beginFill(id)
        var prepare: (@Sendable (RedisConnection) throws(RedisError) -> Bool)?
        if let tracking = fill?.tracking {
            prepare = { connection throws(RedisError) -> Bool in try RedisSessionStore.track(connection, for: tracking) }
        }
        started = true
        pipeline.submit(.script(Self.writeScript, keys: [key(of: id)], arguments: arguments), prepare: prepare) { [self] result in
            let write: PipelinedWrite
            switch result {
            case .failure(let error):
                fill.map { cache?.cancelFill($0) }
                write = .failed(unavailable(error))
            case .success(let answer):
                if case .error(let message) = answer.reply, message.hasPrefix("NOSCRIPT") {
                    fill.map { cache?.cancelFill($0) }
                    write = .notWritten  // `apply` loads the script again
                } else {
                    do throws(SessionStoreError) {
                        switch try finishWrite(answer.reply, tracked: answer.prepared, fill: fill, record, of: id, state: newState, in: menu) {
                        case .written:
                            write = .applied(AppliedChange(sessionID: id, created: false, change: outcome.change, state: newState,
                                                           revision: record.revision))
                        case .missing: write = .failed(.unknownSession)
                        case .moved: write = .notWritten  // another instance wrote first: `apply` computes it again on its record
                        }
                    } catch {
                        write = .failed(error)
                    }
                }
            }
            gate.signal()
            completion(write)
        }
        return true
    }

    /// The pipeline's batches and the writes they carried so far (zeros without a pipeline).
    package var pipelineFigures: (batches: Int, commands: Int) { pipeline?.figures ?? (0, 0) }
}
