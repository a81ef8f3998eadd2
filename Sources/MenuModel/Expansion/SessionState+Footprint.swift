/// What an array's storage takes on the heap: nothing while it has no capacity (the shared empty
/// storage), else the object header (32 bytes: isa, reference count, count, capacity), its
/// capacity's elements, and the allocator's own 16 bytes, rounded up to the allocator's 16-byte
/// granule. O(1).
@inline(__always)
public func heapBytes<Element>(of array: [Element]) -> Int {
    heapBytes(ofCapacity: array.capacity, of: Element.self)
}

/// What an array of `Element` with room for `capacity` elements takes on the heap, counted as
/// ``heapBytes(of:)`` counts an array (its bound before the array exists). O(1).
@inline(__always)
public func heapBytes<Element>(ofCapacity capacity: Int, of _: Element.Type) -> Int {
    guard capacity > 0 else { return 0 }
    let requested = 32 + capacity * MemoryLayout<Element>.stride
    return (requested + 16 + 15) & ~15
}

extension SessionState {
    /// The bytes the state holds on the heap: its flips, its marks, its overlay and its selection
    /// (``SelectionState/heapBytes``), each array
    /// counted by its capacity (what is allocated, not what is used), the way ``heapBytes(of:)``
    /// counts. The inline part (a few words) lives in whatever holds the state. What a session
    /// store's byte budget and per-session cap count. O(depth) (one array per level).
    public var heapBytes: Int {
        var total = MenuModel.heapBytes(of: flipped) + MenuModel.heapBytes(of: marks) + MenuModel.heapBytes(of: levels)
        for level in levels { total += MenuModel.heapBytes(of: level) }
        return total + selection.heapBytes
    }

    /// The same state in arrays of exactly the capacity they need: a state built by appending (from
    /// a client's portable form) may hold up to twice its entries' bytes. O(entries).
    public var compacted: SessionState {
        var copy = self
        copy.flipped = exactCapacity(flipped)
        copy.marks = exactCapacity(marks)
        copy.levels = exactCapacity(levels.map(exactCapacity))
        copy.selection = selection.compacted
        return copy
    }
}

/// `array` in storage of exactly its count (itself when it has no spare capacity). O(count).
func exactCapacity<Element>(_ array: [Element]) -> [Element] {
    guard array.capacity > array.count else { return array }
    return [Element](unsafeUninitializedCapacity: array.count) { buffer, count in
        _ = buffer.initialize(fromContentsOf: array)
        count = array.count
    }
}
