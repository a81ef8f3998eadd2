import Dispatch
import MenuModel
import MenuSessions
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Compaction: a snapshot of every live session replaces the journals, so the files stay
/// bounded by the live state. It runs on one background queue and never holds a lock while it
/// encodes or writes:
/// 1. a new journal generation is created and made the target of appends (a brief lock);
/// 2. each shard is copied under its lock (O(1): copy-on-write) and encoded outside it;
/// 3. the snapshot goes to `snapshot.tmp`, is fsynced, renamed over `snapshot`, and the
///    directory is fsynced; then the journals of older generations are removed.
/// A change made during 2 is in the new journal (and perhaps also in the snapshot: replaying
/// it again is harmless). A crash at any point leaves either the old snapshot with every
/// journal since it, or the new one with the new journal.
extension DurableSessionStore {
    func scheduleCompactionIfNeeded(journalBytes: Int64) {
        guard journalBytes > max(compactionMinimumBytes, 2 * snapshotBytes.load(ordering: .relaxed)),
            !closed.load(ordering: .relaxed),
            wallClock() >= compactionRetryAfter.load(ordering: .relaxed),
            compactionScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
                .exchanged
        else { return }
        compaction.async { [self] in
            if !closed.load(ordering: .acquiring) {
                do {
                    try compact()
                } catch {
                    log("data dir \(directory): compaction failed, retrying in 10 s at the earliest: \(error)")
                    compactionRetryAfter.store(wallClock() + 10_000, ordering: .relaxed)
                }
            }
            compactionScheduled.store(false, ordering: .releasing)
            // A write that crossed the threshold while this one ran could not schedule another;
            // without this check the journal could stay over it until the next write.
            scheduleCompactionIfNeeded(journalBytes: journal.bytes)
        }
    }

    /// Waits until no compaction is running or queued (for tests and shutdown), follow-ups that
    /// a finished compaction scheduled included.
    func waitForCompaction() {
        repeat { compaction.sync {} } while compactionScheduled.load(ordering: .acquiring)
    }

    /// Compacts now, on the compaction queue (after any compaction already queued).
    func compactNow() throws {
        try compaction.sync { try compact() }
    }

    /// Writes a snapshot and starts a new journal generation. Runs on the compaction queue only,
    /// so compactions never overlap.
    private func compact() throws {
        if let refusal = journal.refusal { throw DurableStoreError(directory: directory, refusal) }
        let time = wallClock()
        let generation = journal.generation + 1
        let (file, headerBytes) = try DurableJournal.createFile(in: directory, generation: generation, time: time)
        // Between two batches of the writer: every record of the old generation is in memory.
        let previousEnd = writer.commitLock.withLock { _ in
            journal.beginGeneration(file, generation: generation, headerBytes: headerBytes)
        }
        // The old generation must be on disk before a snapshot can replace it.
        try journal.waitUntilDurable(previousEnd)
        let size = try writeSnapshot(generation: generation, time: time)
        snapshotBytes.store(size, ordering: .relaxed)
        journal.olderGenerationsCompacted()
        for name in try DurableFile.names(in: directory) {
            if let old = DurableJournal.generation(fromFileName: name), old < generation {
                try DurableFile.remove(directory + "/" + name)
            }
        }
        try DurableFile.syncDirectory(directory)
    }

    /// Writes `snapshot` atomically (temporary file, fsync, rename, fsync of the directory) and
    /// returns its size.
    private func writeSnapshot(generation: UInt64, time: Int64) throws(DurableIOError) -> Int64 {
        let temporary = directory + "/" + DurableRecovery.temporarySnapshotName
        let file = try DurableFile.open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
        var renamed = false
        defer { if !renamed { try? DurableFile.remove(temporary) } }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        DurableRecord.appendFileHeader(
            to: &buffer, magic: DurableRecord.snapshotMagic, generation: generation, time: time)
        var written: Int64 = 0
        var count = 0
        var reloadsWritten = 0
        let now = clock()
        for index in 0 ..< SessionTable<Entry>.shardCount {
            let sessions = table.withShard(at: index) { $0 }
            // Read after the copy: no session in it is on a newer menu (``LatestMenu``), and the
            // journal has its reload (noted only after).
            let menu = latest.current
            let reloads = reloads(of: menu.epoch)
            if reloads != reloadsWritten {
                DurableRecord.appendSnapshotReloads(reloads, to: &buffer)
                reloadsWritten = reloads
            }
            try sessions.forEach { (id, entry) throws(DurableIOError) in
                let idle = now.milliseconds(since: entry.lastUsed)
                guard idle < timeToLiveMilliseconds else { return }
                // State and revision as carried over to `menu`: one revision per reload crossed.
                DurableRecord.appendSession(
                    id, lastUsed: time - idle, state: entry.portable(latest: menu),
                    revision: entry.revision + menu.epoch.number - entry.epoch.number, to: &buffer)
                count += 1
                if buffer.count >= 1 << 20 {
                    try file.write(buffer, at: written)
                    written += Int64(buffer.count)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
        }
        DurableRecord.appendSnapshotEnd(sessionCount: count, to: &buffer)
        try file.write(buffer, at: written)
        written += Int64(buffer.count)
        try file.sync()
        try DurableFile.rename(temporary, to: directory + "/" + DurableRecovery.snapshotName)
        renamed = true
        try DurableFile.syncDirectory(directory)
        return written
    }
}
