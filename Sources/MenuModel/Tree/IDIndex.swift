/// Node positions by id: open addressing with linear probing over a power-of-two table whose
/// slots hold a 32-bit hash tag and the node's position (0 = empty; the root, position 0, is never
/// indexed). The id itself is compared against `ids[position]`, so the table stores no strings.
///
/// Invariant: load factor ≤ 1/2, so a lookup is one hash of the id's bytes and, typically, one or
/// two probes. Replaces `[String: Int32]`, whose SipHash and separate key storage made id lookups
/// and the 1.1M-node load measurably slower (docs/performance.md, design choices).
struct IDIndex: Sendable {
    private var slots: [UInt64]
    private(set) var count = 0

    init(expectedCount: Int = 0) {
        var capacity = 16
        while capacity < expectedCount * 2 { capacity *= 2 }
        slots = Array(repeating: 0, count: capacity)
    }

    /// The position of the node with `id`, if any.
    func position(of id: String, ids: [String]) -> Int32? {
        let hash = Self.hash(id)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        let tag = hash >> 32
        while true {
            let entry = slots[slot]
            if entry == 0 { return nil }
            if entry >> 32 == tag, ids[Int(entry & 0xFFFF_FFFF)] == id { return Int32(entry & 0xFFFF_FFFF) }
            slot = (slot + 1) & mask
        }
    }

    /// Adds `id` → `position` unless the id is taken; returns the position that already has it.
    mutating func insert(_ id: String, position: Int32, ids: [String]) -> Int32? {
        if let existing = self.position(of: id, ids: ids) { return existing }
        if (count + 1) * 2 > slots.count { grow(ids: ids) }
        place(Self.hash(id), position)
        count += 1
        return nil
    }

    private mutating func place(_ hash: UInt64, _ position: Int32) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = (hash >> 32) << 32 | UInt64(UInt32(position))
    }

    private mutating func grow(ids: [String]) {
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        for entry in old where entry != 0 {
            let position = Int32(entry & 0xFFFF_FFFF)
            place(Self.hash(ids[Int(position)]), position)
        }
    }

    /// FNV-1a over the UTF-8 bytes, then a 64-bit finalizer so low and high bits both mix.
    static func hash(_ id: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let hashed: Void? = id.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        }
        if hashed == nil {
            for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        }
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash &*= 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }
}
