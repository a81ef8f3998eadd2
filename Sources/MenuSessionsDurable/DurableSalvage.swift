/// What reading a whole journal or snapshot file kept and what it could not.
///
/// The reader keeps every frame that validates (``DurableRecord/frame(in:at:length:)``) and
/// whose payload the caller accepts, in file order. At a frame that does not, it scans forward
/// byte by byte for the next one that does (resynchronises), so damage costs the records it
/// touches, not everything after it. A frame whose length alone was damaged is repaired: when
/// the length that reaches exactly the next valid frame (or the end of the file) makes the
/// stored checksum match, the record is kept.
///
/// Invariant: the magic, the kept frames and ``damage`` tile the file from byte 0 to its end, in
/// order. Cost: O(file) when intact; past damage, each candidate offset costs a byte compare
/// and, when its length fits and its kind byte is one the file can hold, one checksum.
///
/// A torn tail is what a crash in the middle of appending leaves: the file ends inside a frame
/// (a header or a payload cut short) or in zeros, and nothing valid follows. Everything else is
/// corruption, in particular any damage with a valid frame after it and any whole frame whose
/// checksum fails. No durable high-water mark is needed to tell them apart: an append that was
/// acknowledged, even under `--fsync always`, and whose length byte later flipped reads as a
/// repaired length (the checksum covers the length), and a flip elsewhere leaves a whole frame
/// with a failed checksum. Only two faults in one frame can pass for a tear, and the kind is a
/// label only: the bytes are set aside whatever it is.
package struct DurableSalvage {
    /// Bytes the reader could not keep as they are.
    struct DamagedRange: Sendable, Equatable, CustomStringConvertible {
        enum Kind: String, Sendable {
            /// The file ends inside a record: a write cut short by a crash. Expected after one.
            case tornTail = "torn tail"
            /// Anything else: a damaged record, with or without valid data after it.
            case corrupt = "corrupt record"
        }

        var kind: Kind
        /// First damaged byte.
        var offset: Int
        /// Where valid data (or the file) resumes.
        var end: Int
        var detail: String
        /// Only the record's length was wrong and has been corrected: its bytes are kept.
        var lengthRepaired = false

        var droppedBytes: Int { lengthRepaired ? 0 : end - offset }

        var description: String {
            lengthRepaired
                ? "\(kind.rawValue) at byte \(offset) (\(detail))"
                : "\(kind.rawValue) at byte \(offset) (\(detail)): bytes \(offset)..<\(end) dropped"
        }
    }

    /// The generation a valid file header names; nil when the header is damaged.
    var generation: UInt64?
    /// Records kept after the header, repaired ones included.
    var keptRecords = 0
    /// Bytes of the file kept: the magic, the header and the records.
    var keptBytes = 0
    var damage: [DamagedRange] = []
    let fileSize: Int

    var droppedBytes: Int { damage.reduce(0) { $0 + $1.droppedBytes } }
    var repairedLengths: Int { damage.count { $0.lengthRepaired } }
    /// Damaged ranges whose bytes were dropped: each held at least one record.
    var droppedRanges: Int { damage.count { !$0.lengthRepaired } }
    var firstDamage: Int? { damage.first?.offset }

    /// Only a tail is lost and the file is intact before it: cutting the file there repairs it.
    var isIntactBeforeATail: Bool {
        generation != nil && damage.count == 1 && !damage[0].lengthRepaired && damage[0].end == fileSize
    }

    /// Reads `bytes`, a file that starts with `magic` and a file header record. `kinds` are the
    /// record kinds it may hold (a cheap filter while resynchronising); `isRecord` says whether
    /// a payload decodes (pure: used to test candidates), `consume` decodes and applies one in
    /// file order and returns false when it does not fit there (then it counts as damage).
    init(
        _ bytes: [UInt8], magic: [UInt8], kinds: [DurableRecord.Kind],
        isRecord: (ArraySlice<UInt8>) -> Bool, consume: (ArraySlice<UInt8>) -> Bool
    ) {
        fileSize = bytes.count
        let headerKind = DurableRecord.Kind.fileHeader.rawValue
        var kindBytes = [Bool](repeating: false, count: 256)
        for kind in kinds { kindBytes[Int(kind.rawValue)] = true }

        // The header is only ever the first record.
        func headerExpected() -> Bool { generation == nil && keptRecords == 0 }
        func plausible(_ payload: ArraySlice<UInt8>) -> Bool {
            if payload.first == headerKind { return headerExpected() && DurableRecord.decodeFileHeader(payload) != nil }
            return isRecord(payload)
        }
        func accept(_ payload: ArraySlice<UInt8>) -> Bool {
            if payload.first == headerKind {
                guard headerExpected(), let found = DurableRecord.decodeFileHeader(payload) else { return false }
                generation = found
            } else {
                guard consume(payload) else { return false }
                keptRecords += 1
            }
            keptBytes += DurableRecord.frameHeaderSize + payload.count
            return true
        }
        /// The next offset from `start` on where a frame validates and holds a plausible record.
        func resynchronise(from start: Int) -> Int? {
            var candidate = start
            while bytes.count - candidate > DurableRecord.frameHeaderSize {
                let kind = bytes[candidate + DurableRecord.frameHeaderSize]
                if kindBytes[Int(kind)] || (kind == headerKind && headerExpected()),
                    let payload = DurableRecord.frame(in: bytes, at: candidate), plausible(payload)
                {
                    return candidate
                }
                candidate += 1
            }
            return nil
        }

        var position = 0
        if bytes.starts(with: magic) {
            position = magic.count
            keptBytes = magic.count
        } else {
            let end = resynchronise(from: 1) ?? bytes.count
            let short = end == bytes.count && bytes.count < magic.count + DurableRecord.frameHeaderSize + 17
            damage.append(
                DamagedRange(
                    kind: short ? .tornTail : .corrupt, offset: 0, end: end,
                    detail: short ? "\(bytes.count) bytes, not a whole file header" : "not the file's magic bytes"))
            position = end
        }
        while position < bytes.count {
            if let payload = DurableRecord.frame(in: bytes, at: position), accept(payload) {
                position = payload.endIndex
                continue
            }
            let end = resynchronise(from: position + 1) ?? bytes.count
            let storedLength = bytes.count - position >= 4 ? Int(bytes.loadLittleEndianUInt32(at: position)) : 0
            let fittingLength = end - position - DurableRecord.frameHeaderSize
            if fittingLength != storedLength,
                let payload = DurableRecord.frame(in: bytes, at: position, length: fittingLength),
                accept(payload)
            {
                damage.append(
                    DamagedRange(
                        kind: .corrupt, offset: position, end: end,
                        detail:
                            "record length \(storedLength) damaged; \(fittingLength), which its checksum confirms, restored",
                        lengthRepaired: true))
            } else {
                damage.append(Self.diagnose(bytes, from: position, to: end))
            }
            position = end
        }
    }

    /// What the bytes from `offset` to `end` (where valid data or the file resumes) are.
    private static func diagnose(_ bytes: [UInt8], from offset: Int, to end: Int) -> DamagedRange {
        let atEnd = end == bytes.count
        let remaining = bytes.count - offset
        let kind: DamagedRange.Kind
        let detail: String
        if atEnd, bytes[offset...].allSatisfy({ $0 == 0 }) {
            // What a crash leaves when the file's size reached the disk but its data did not.
            (kind, detail) = (.tornTail, "zero-filled tail")
        } else if remaining < DurableRecord.frameHeaderSize {
            (kind, detail) = (atEnd ? .tornTail : .corrupt, "\(remaining) bytes of a record header")
        } else {
            let length = Int(bytes.loadLittleEndianUInt32(at: offset))
            let written = remaining - DurableRecord.frameHeaderSize
            if length == 0 || length > DurableRecord.maxPayload {
                (kind, detail) = (.corrupt, "impossible record length \(length)")
            } else if length > written {
                (kind, detail) = (
                    atEnd ? .tornTail : .corrupt, "a \(length)-byte record with only \(written) bytes after it"
                )
            } else if DurableRecord.frame(in: bytes, at: offset) == nil {
                (kind, detail) = (.corrupt, "checksum mismatch")
            } else {
                (kind, detail) = (.corrupt, "a record this file cannot hold here")
            }
        }
        return DamagedRange(
            kind: kind, offset: offset, end: end,
            detail: detail + (atEnd ? "" : ", valid records resume at byte \(end)"))
    }
}

extension DurableSalvage {
    /// Checks the invariant: the damaged ranges are in order, inside the file and apart, and the
    /// kept bytes plus the dropped ones are the whole file. Traps when it does not hold.
    func checkInvariants() {
        var previous = 0
        for range in damage {
            precondition(
                range.offset >= previous && range.end >= range.offset && range.end <= fileSize, "ranges \(damage)")
            previous = range.end
        }
        precondition(
            keptBytes + droppedBytes == fileSize, "kept \(keptBytes) + dropped \(droppedBytes) != \(fileSize) bytes")
    }

    /// Reads `bytes` as a journal and as a snapshot, as recovery does, and checks the invariant
    /// of each reading: the durable-file fuzz target.
    package static func fuzzRead(_ bytes: [UInt8]) {
        let journal = DurableSalvage(
            bytes, magic: DurableRecord.journalMagic, kinds: DurableRecord.journalKinds,
            isRecord: { DurableRecord.decodeEvent($0) != nil },
            consume: { DurableRecord.decodeEvent($0) != nil })
        journal.checkInvariants()
        let snapshot = DurableSalvage(
            bytes, magic: DurableRecord.snapshotMagic, kinds: DurableRecord.snapshotKinds,
            isRecord: { DurableRecord.decodeSnapshotItem($0) != nil },
            consume: { DurableRecord.decodeSnapshotItem($0) != nil })
        snapshot.checkInvariants()
    }
}
