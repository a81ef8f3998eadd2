import Dispatch
import Foundation
import MenuSessions
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// When the session journal is flushed to disk, as Redis's `appendfsync`.
///
/// Invariant, whatever the policy: each change is written to the journal with write(2) before
/// its reply, so a crash of the process loses nothing; the policy only decides what a power cut
/// or kernel crash can lose. Replay cost does not depend on it.
package enum FsyncPolicy: String, Sendable, Equatable, CaseIterable {
    /// fdatasync before the reply: an acknowledged change is on disk (group commit: one flush
    /// covers every writer that is waiting).
    case always
    /// A background thread flushes once a second: at most about a second of acknowledged
    /// changes can be lost to a power cut.
    case everysec
    /// The kernel flushes when it likes (usually within 30 s).
    case no
}

/// The append side of the journal: a chain of files `journal-<generation>` in the data
/// directory, the newest one open for appends.
///
/// Invariants:
/// - The current file always ends on a record boundary: a failed write is truncated away before
///   the append lock is released, and if that truncation fails the journal refuses all writes.
/// - Positions are logical: `appended` counts every byte appended since start-up, across
///   generations; everything before `durable` is on disk. Files of older generations stay in
///   `retired` until a sync has flushed them, so a sync never misses a record.
/// - A failed flush refuses all later writes; under ``FsyncPolicy/always`` it also cuts the
///   current file back to what the last good flush covered, since nothing after it was
///   acknowledged (``DurableJournalWriter`` is its only appender, and answers only after a flush).
/// - Lock order: `syncLock`, then `appendLock`. Appends take only `appendLock`, around the
///   write(2) alone, so they never wait for a flush.
final class DurableJournal: Sendable {
    let directory: String
    let policy: FsyncPolicy
    private let log: @Sendable (String) -> Void
    private let appendLock: Mutex<AppendState>
    /// Held for the whole of a flush: writers that wait for durability queue here and find
    /// their record covered by the flush before them (group commit).
    private let syncLock = Mutex<SyncState>(SyncState())
    private let stopBackgroundSync = DispatchSemaphore(value: 0)

    private struct AppendState {
        var file: DurableFile
        var generation: UInt64
        var fileBytes: Int64
        /// How much of the current file a flush has put on disk (its header at least).
        var flushedFileBytes: Int64
        /// Bytes in journal files written since the last snapshot other than the current one.
        var olderBytes: Int64
        var appended: UInt64 = 0
        var retired: [DurableFile] = []
        /// Set when the journal can no longer be trusted (a failed flush, a failed undo, closed).
        var refusal: String?
        /// Set while writes are failing (disk full): logged once per episode.
        var failing = false
    }

    private struct SyncState {
        var durable: UInt64 = 0
        var failure: String?
    }

    /// Where an append ended: its logical position and the journal's size since the snapshot.
    struct Receipt {
        var position: UInt64
        var journalBytes: Int64
    }

    init(
        directory: String, file: DurableFile, generation: UInt64, fileBytes: Int64, olderBytes: Int64,
        policy: FsyncPolicy, log: @escaping @Sendable (String) -> Void
    ) {
        self.directory = directory
        self.policy = policy
        self.log = log
        appendLock = Mutex(
            AppendState(
                file: file, generation: generation, fileBytes: fileBytes,
                flushedFileBytes: fileBytes, olderBytes: olderBytes))
        if policy == .everysec { startBackgroundSync() }
    }

    static func fileName(generation: UInt64) -> String {
        let hex = String(generation, radix: 16)
        return "journal-" + String(repeating: "0", count: max(0, 16 - hex.count)) + hex
    }

    /// The generation a journal file name carries; nil for other names.
    static func generation(fromFileName name: String) -> UInt64? {
        guard name.hasPrefix("journal-"), name.utf8.count == 24 else { return nil }
        return UInt64(name.dropFirst(8), radix: 16)
    }

    /// Creates `journal-<generation>` holding only its header, flushed, with its name on disk.
    static func createFile(in directory: String, generation: UInt64, time: Int64) throws(DurableIOError) -> (
        DurableFile, Int64
    ) {
        let path = directory + "/" + fileName(generation: generation)
        let file = try DurableFile.open(path, O_WRONLY | O_CREAT | O_TRUNC)
        var header: [UInt8] = []
        DurableRecord.appendFileHeader(
            to: &header, magic: DurableRecord.journalMagic, generation: generation, time: time)
        try file.write(header, at: 0)
        try file.syncData()
        try DurableFile.syncDirectory(directory)
        return (file, Int64(header.count))
    }

    var generation: UInt64 { appendLock.withLock { $0.generation } }

    /// Bytes in the journal files (the current one and older generations not yet removed).
    var bytes: Int64 { appendLock.withLock { $0.olderBytes + $0.fileBytes } }

    // MARK: Appending

    /// Writes `bytes` (whole records) at the end of the current file. Throws `.unavailable` when
    /// the write fails (nothing of it stays in the file) or the journal refuses writes.
    func append(_ bytes: [UInt8]) throws(SessionStoreError) -> Receipt {
        enum Outcome {
            case written(Receipt, recovered: Bool)
            case refused(String)
            case failed(DurableIOError, undo: DurableIOError?)
        }
        let outcome: Outcome = appendLock.withLock { state in
            if let refusal = state.refusal { return .refused(refusal) }
            do throws(DurableIOError) {
                try state.file.write(bytes, at: state.fileBytes)
            } catch {
                state.failing = true
                // Cut off whatever part was written, so the file ends on a record boundary again.
                do throws(DurableIOError) {
                    try state.file.truncate(to: state.fileBytes)
                } catch let undo {
                    state.refusal =
                        "the journal could not be repaired after a failed write (\(undo.reason)); restart the server"
                    return .failed(error, undo: undo)
                }
                return .failed(error, undo: nil)
            }
            state.fileBytes += Int64(bytes.count)
            state.appended += UInt64(bytes.count)
            let recovered = state.failing
            state.failing = false
            return .written(
                Receipt(position: state.appended, journalBytes: state.olderBytes + state.fileBytes),
                recovered: recovered)
        }
        switch outcome {
        case .written(let receipt, let recovered):
            if recovered { log("session journal: writes succeed again") }
            return receipt
        case .refused(let reason):
            throw .unavailable(reason: reason)
        case .failed(let error, let undo):
            if let undo {
                log("session journal: \(error); then \(undo): refusing all writes until restart")
            } else {
                log("session journal: \(error); the change was refused (503) and not applied")
            }
            throw .unavailable(reason: "the session journal cannot be written: \(error.reason)")
        }
    }

    // MARK: Flushing

    /// Returns when every byte up to `position` is on disk, flushing if needed. One flush covers
    /// all records appended before it starts, so concurrent callers share it.
    func waitUntilDurable(_ position: UInt64) throws(SessionStoreError) {
        let failure: String? = syncLock.withLock { sync -> String? in
            if sync.durable >= position { return nil }
            if let failure = sync.failure { return failure }
            let (current, retired, target, currentBytes) = appendLock.withLock {
                ($0.file, $0.retired, $0.appended, $0.fileBytes)
            }
            do throws(DurableIOError) {
                // Retired files get no more appends: one flush each is final.
                for file in retired { try file.syncData() }
                try current.syncData()
            } catch {
                let reason = "the session journal could not be flushed to disk (\(error.reason)); restart the server"
                sync.failure = reason
                let cut = appendLock.withLock { state -> Bool in
                    state.refusal = state.refusal ?? reason
                    // Under `always` nothing past the last good flush was answered 200: cut it off,
                    // so that a restart cannot bring back a change that was refused.
                    guard policy == .always else { return false }
                    return (try? state.file.truncate(to: state.flushedFileBytes)) != nil
                }
                let lost =
                    policy == .always
                    ? (cut ? "the unconfirmed changes were cut off" : "the unconfirmed changes could not be cut off")
                    : "acknowledged changes since the last flush may be lost"
                log("session journal: \(error): refusing all writes until restart (\(lost))")
                return reason
            }
            appendLock.withLock { state in
                state.retired.removeAll { file in retired.contains { $0 === file } }
                if state.file === current { state.flushedFileBytes = max(state.flushedFileBytes, currentBytes) }
            }
            sync.durable = max(sync.durable, target)
            return nil
        }
        if let failure { throw .unavailable(reason: failure) }
    }

    /// Flushes everything appended so far.
    func syncAll() throws(SessionStoreError) {
        try waitUntilDurable(appendLock.withLock { $0.appended })
    }

    private func startBackgroundSync() {
        let stop = stopBackgroundSync
        let thread = Thread { [weak self] in
            while stop.wait(timeout: .now() + .seconds(1)) == .timedOut {
                guard let self else { return }
                try? self.syncAll()  // a failure refuses further writes and is logged by waitUntilDurable
            }
        }
        thread.name = "menu-server journal fsync"
        thread.start()
    }

    // MARK: Generations and shutdown

    /// Makes `file` (a new, empty journal) the target of appends; the current file is retired.
    /// Returns the logical position where the old generation ends.
    func beginGeneration(_ file: DurableFile, generation: UInt64, headerBytes: Int64) -> UInt64 {
        appendLock.withLock { state in
            state.retired.append(state.file)
            state.olderBytes += state.fileBytes
            state.file = file
            state.generation = generation
            state.fileBytes = headerBytes
            state.flushedFileBytes = headerBytes
            return state.appended
        }
    }

    /// A snapshot now holds everything before the current generation.
    func olderGenerationsCompacted() {
        appendLock.withLock { $0.olderBytes = 0 }
    }

    /// Why the journal refuses writes, if it does.
    var refusal: String? { appendLock.withLock { $0.refusal } }

    /// Flushes everything, stops the background flush and refuses further writes.
    func close() {
        stopBackgroundSync.signal()
        do { try syncAll() } catch { log("session journal: final flush failed: \(error)") }
        appendLock.withLock { $0.refusal = $0.refusal ?? "the server is shutting down" }
    }
}
