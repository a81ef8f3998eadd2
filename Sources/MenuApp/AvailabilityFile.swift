import Foundation
import MenuAvailability
import MenuService

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The availability overlay kept in the data directory (`--data-dir`), so a restart serves what
/// was set before it: `availability.json`, `{"revision": r, "entries": {"<id>": {"state",
/// "until"?, "reason"?}}}`.
///
/// Each overlay is written whole to a temporary file, flushed to disk (`fsync`), renamed over the
/// last one and the directory flushed: a crash leaves the old file or the new one, never a mix.
/// Admin batches are rare and small (one entry per unavailable node, about 100 bytes), so a whole
/// file per change costs less than a journal's bookkeeping. Reading it back is strict: a file
/// that is not what this type writes stops the start, naming the file and what is wrong.
package final class AvailabilityFile: AvailabilityKeeper {
    package let path: String
    package let keptOverlay: AvailabilityOverlay?

    /// The file in `directory`, read when it exists.
    package init(directory: String) throws(StartupError) {
        path = (directory as NSString).appendingPathComponent("availability.json")
        guard let data = FileManager.default.contents(atPath: path) else {
            keptOverlay = nil
            return
        }
        do throws(AvailabilityNotKept) { keptOverlay = try Self.overlay(from: data) } catch {
            throw .availabilityFile(path: path, reason: error.description)
        }
    }

    /// One process writes the file: `previous` is not checked.
    package func keep(_ overlay: AvailabilityOverlay, over previous: Int) throws(AvailabilityNotKept) {
        let data = try Self.data(of: overlay)
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Self.failure("open", temporary) }
        let written = data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard written, fsync(descriptor) == 0 else {
            let failure = Self.failure("write", temporary)
            close(descriptor)
            unlink(temporary)
            throw failure
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let failure = Self.failure("rename", temporary)
            unlink(temporary)
            throw failure
        }
        let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    private static func failure(_ call: String, _ path: String) -> AvailabilityNotKept {
        AvailabilityNotKept("\(call) \(path): \(String(cString: strerror(errno)))")
    }

    /// `overlay` as this type writes it (Redis keeps the same text).
    static func data(of overlay: AvailabilityOverlay) throws(AvailabilityNotKept) -> Data {
        var entries: [String: Any] = [:]
        for (id, availability) in overlay.entries {
            var entry: [String: Any] = ["state": availability.state.rawValue]
            if let until = availability.until { entry["until"] = until.rfc3339 }
            if let reason = availability.reason { entry["reason"] = reason }
            entries[id] = entry
        }
        var closed: [String: Any] = [:]
        for (id, availability) in overlay.closedByHours {
            closed[id] = availability.until.map { $0.rfc3339 as Any } ?? NSNull()
        }
        do {
            return try JSONSerialization.data(
                withJSONObject: ["revision": overlay.revision, "entries": entries, "closed": closed],
                options: [.sortedKeys])
        } catch {
            throw AvailabilityNotKept("cannot encode the overlay: \(error)")
        }
    }

    /// The overlay `data` holds, checked as strictly as a batch (states, times, reasons).
    static func overlay(from data: Data) throws(AvailabilityNotKept) -> AvailabilityOverlay {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let revision = object["revision"] as? Int, revision >= 0,
            let entries = object["entries"] as? [String: Any]
        else {
            throw AvailabilityNotKept(#"not {"revision": <count>, "entries": {…}}"#)
        }
        var overlay: [String: Availability] = [:]
        for (id, value) in entries {
            guard let entry = value as? [String: Any], let stateName = entry["state"] as? String,
                let state = AvailabilityState(rawValue: stateName), state == .soldOut || state == .paused
            else { throw AvailabilityNotKept("entries.\(id): no state sold_out or paused") }
            var until: Timestamp?
            if let text = entry["until"] as? String {
                do throws(Timestamp.Malformed) { until = try Timestamp(rfc3339: text) } catch {
                    throw AvailabilityNotKept("entries.\(id).until: \(error.reason)")
                }
            }
            let reason = entry["reason"] as? String
            if let reason, reason.utf8.count > Availability.reasonLimit {
                throw AvailabilityNotKept("entries.\(id).reason: longer than \(Availability.reasonLimit) bytes")
            }
            overlay[id] = Availability(state: state, until: until, reason: reason)
        }
        // The nodes the hours closed when it was kept (absent before opening hours existed).
        var closed: [String: Availability] = [:]
        for (id, value) in object["closed"] as? [String: Any] ?? [:] {
            var until: Timestamp?
            if let text = value as? String {
                do throws(Timestamp.Malformed) { until = try Timestamp(rfc3339: text) } catch {
                    throw AvailabilityNotKept("closed.\(id): \(error.reason)")
                }
            } else if !(value is NSNull) {
                throw AvailabilityNotKept("closed.\(id): not a time or null")
            }
            closed[id] = Availability(state: .closed, until: until)
        }
        return AvailabilityOverlay(revision: revision, entries: overlay, closedByHours: closed)
    }
}
