import MenuModel
import MenuSessions

/// A session's whole state in the files: its ``PortableState`` (base, marks by id, flipped
/// groups by id) as entries, what the journal's ``DurableRecord/Kind/state`` records and the
/// snapshot's ``DurableRecord/Kind/sessionState`` records hold. Its size follows the state's
/// entries (``SessionState/changedGroupCount``), never the groups a bulk command affected:
/// expand-all is one 50-byte journal record whatever the menu's size.
extension DurableRecord {
    /// One entry of a state: a flipped group with its state in the session, or a mark with its
    /// mode; or a part of the selection (``PortableSelection``): a toggled node, or the mark that
    /// every leaf is selected by default. On disk `u8 tag | u32 length | id (UTF-8)`: tag 0 or 1 a
    /// flip (collapsed, expanded: the encoding of the older records' groups),
    /// 2 + ``ExpansionMode/durableByte`` a mark, 5 a selection toggle, 6 (with an empty id) every
    /// leaf selected by default.
    enum StateEntry: Equatable {
        case flip(String, isExpanded: Bool)
        case mark(String, mode: ExpansionMode)
        case selectionToggle(String)
        case selectedByDefault

        var id: String {
            switch self {
            case .flip(let id, _), .mark(let id, _), .selectionToggle(let id): id
            case .selectedByDefault: ""
            }
        }

        /// Bytes on disk: tag, length, id.
        var encodedSize: Int { 5 + id.utf8.count }
    }

    /// `state`'s entries: its marks, then its flips, then its selection.
    static func stateEntries(_ state: PortableState) -> [StateEntry] {
        state.marks.map { .mark($0.id, mode: $0.mode) } + state.flips.map { .flip($0.id, isExpanded: $0.isExpanded) }
            + (state.selection.all ? [.selectedByDefault] : []) + state.selection.toggled.map { .selectionToggle($0) }
    }

    /// The journal events that set session `id` to `state` at `revision` (on a menu of reload
    /// count `reloads`): one ``Kind/state`` record, then ``Kind/stateMore`` records for the entries
    /// that do not fit in it, each payload within `payloadLimit`.
    static func stateEvents(
        of id: SessionID, _ state: PortableState, revision: Int, reloads: Int = 0, payloadLimit: Int = maxPayload
    ) -> [Event] {
        let entries = stateEntries(state)
        // kind, time, id, revision, (reloads), base, total, count; a continuation: kind, time, id, count.
        let parts = chunked(
            entries, firstHead: 1 + 8 + 16 + 8 + (reloads > 0 ? 8 : 0) + 1 + 4 + 4, moreHead: 1 + 8 + 16 + 4,
            payloadLimit: payloadLimit)
        return [
            .state(id, revision: revision, reloads: reloads, base: state.base, total: entries.count, entries: parts[0])
        ] + parts.dropFirst().map { .stateMore(id, entries: $0) }
    }

    /// `entries` cut into parts in order, the first within `payloadLimit` after `firstHead`
    /// bytes, the others after `moreHead`; every part holds at least one entry (ids are at most
    /// 128 bytes, far below any limit a store uses), and there is always a first part.
    static func chunked(_ entries: [StateEntry], firstHead: Int, moreHead: Int, payloadLimit: Int) -> [[StateEntry]] {
        var parts: [[StateEntry]] = [[]]
        var size = firstHead
        for entry in entries {
            if !parts[parts.count - 1].isEmpty, size + entry.encodedSize > payloadLimit {
                parts.append([])
                size = moreHead
            }
            parts[parts.count - 1].append(entry)
            size += entry.encodedSize
        }
        return parts
    }

    /// `u32 n | n × entry`.
    static func appendEntries(_ entries: [StateEntry], to payload: inout [UInt8]) {
        payload.appendLittleEndian(UInt32(entries.count))
        for entry in entries {
            switch entry {
            case .flip(_, let isExpanded): payload.append(isExpanded ? 1 : 0)
            case .mark(_, let mode): payload.append(2 + mode.durableByte)
            case .selectionToggle: payload.append(5)
            case .selectedByDefault: payload.append(6)
            }
            payload.appendLittleEndian(UInt32(entry.id.utf8.count))
            payload.append(contentsOf: entry.id.utf8)
        }
    }

    /// `u32 n | n × entry`, which must end the payload.
    static func decodeEntries(_ reader: inout DurablePayloadReader) -> [StateEntry]? {
        guard let count = reader.uint32(), Int(count) <= reader.remaining / 5 else { return nil }
        var entries: [StateEntry] = []
        entries.reserveCapacity(Int(count))
        for _ in 0 ..< count {
            guard let tag = reader.byte(), tag <= 6, let length = reader.uint32(),
                let id = reader.string(length: Int(length))
            else { return nil }
            if tag <= 1 {
                entries.append(.flip(id, isExpanded: tag == 1))
            } else if tag == 5 {
                entries.append(.selectionToggle(id))
            } else if tag == 6 {
                guard id.isEmpty else { return nil }
                entries.append(.selectedByDefault)
            } else {
                guard let mode = ExpansionMode(durableByte: tag - 2) else { return nil }
                entries.append(.mark(id, mode: mode))
            }
        }
        return reader.isAtEnd ? entries : nil
    }
}

extension ExpansionMode {
    /// The mode's byte in the files: 0 default, 1 expanded, 2 collapsed.
    var durableByte: UInt8 {
        switch self {
        case .default: 0
        case .expanded: 1
        case .collapsed: 2
        }
    }

    init?(durableByte: UInt8) {
        switch durableByte {
        case 0: self = .default
        case 1: self = .expanded
        case 2: self = .collapsed
        default: return nil
        }
    }
}
