#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A response body in memory the server hands to libmicrohttpd without copying it: libmicrohttpd
/// holds a reference (retained through its free-callback `cls`) until the response is sent.
///
/// Invariant: `count` initialised bytes at `start`, allocated with `malloc`, never written after
/// ``ResponseBodyWriter/finish()`` created the value, and freed exactly once, by `deinit`. That
/// immutability is what makes it `Sendable`.
public final class ResponseBody: @unchecked Sendable {
    package let start: UnsafeMutableRawPointer
    /// The number of bytes.
    public let count: Int
    /// The size of the block at `start` (for ``SpareBlock``).
    let capacity: Int

    fileprivate init(start: UnsafeMutableRawPointer, count: Int, capacity: Int) {
        self.start = start
        self.count = count
        self.capacity = capacity
    }

    deinit { SpareBlock.release(start, capacity: capacity) }

    /// A copy of the bytes.
    public var bytes: [UInt8] {
        [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    }

    /// Calls `body` with the bytes, valid only during the call.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: start, count: count))
    }
}

/// A growable byte buffer for building a response body with plain memory copies (no per-append
/// uniqueness or capacity bookkeeping of `Array`), finished into a ``ResponseBody`` without a copy.
///
/// Invariant: owns one `malloc` block of `capacity` bytes whose first `count` are written;
/// `count <= capacity`. The block is freed by `deinit` unless ``finish()`` handed it to a
/// ``ResponseBody``. Appends cost O(bytes) amortised (the block doubles when full).
@frozen
public struct ResponseBodyWriter: ~Copyable {
    @usableFromInline var start: UnsafeMutableRawPointer
    @usableFromInline var capacity: Int
    @usableFromInline var written = 0
    /// Bytes written so far.
    public var count: Int { written }
    /// Bytes that can still be written before the buffer has to grow.
    @inlinable public var spareCapacity: Int { capacity &- written }

    /// An empty buffer with room for at least `capacity` bytes before it has to grow.
    public init(capacity: Int = 256) {
        (start, self.capacity) = SpareBlock.take(atLeast: capacity)
    }

    deinit { SpareBlock.release(start, capacity: capacity) }

    /// Makes room for `additional` more bytes.
    @inlinable @inline(__always)
    public mutating func reserve(_ additional: Int) {
        if written &+ additional > capacity { grow(to: written + additional) }
    }

    @usableFromInline
    mutating func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        guard let block = realloc(start, newCapacity) else { fatalError("out of memory (\(newCapacity) bytes)") }
        start = block
        capacity = newCapacity
    }

    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        reserve(1)
        start.storeBytes(of: byte, toByteOffset: written, as: UInt8.self)
        written &+= 1
    }

    @inlinable @inline(__always)
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        let target = start + written
        let length = bytes.count
        // Short pieces (punctuation, keys, digits) are copied with word moves that may overlap
        // (first and last 16, 8 or 4 bytes): a memcpy call costs more than the copy.
        if length > 16, length <= 32 {
            let head0 = source.loadUnaligned(as: UInt64.self)
            let head1 = source.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            let tail0 = source.loadUnaligned(fromByteOffset: length - 16, as: UInt64.self)
            let tail1 = source.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
            target.storeBytes(of: head0, as: UInt64.self)
            target.storeBytes(of: head1, toByteOffset: 8, as: UInt64.self)
            target.storeBytes(of: tail0, toByteOffset: length - 16, as: UInt64.self)
            target.storeBytes(of: tail1, toByteOffset: length - 8, as: UInt64.self)
        } else if length >= 8, length <= 16 {
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: length - 8, as: UInt64.self)
        } else if length >= 4, length < 8 {
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: length - 4, as: UInt32.self)
        } else if length < 4 {
            for offset in 0 ..< length {
                target.storeBytes(
                    of: source.load(fromByteOffset: offset, as: UInt8.self), toByteOffset: offset, as: UInt8.self)
            }
        } else {
            target.copyMemory(from: source, byteCount: length)
        }
        written &+= length
    }

    /// Lets `write` store at most `maxBytes` bytes at the end of the buffer and keeps the number
    /// it returns (which must be `<= maxBytes`): for pieces built with plain stores, one capacity
    /// check for several of them.
    @inlinable @inline(__always)
    public mutating func append(atMost maxBytes: Int, _ write: (UnsafeMutableRawPointer) -> Int) {
        reserve(maxBytes)
        let length = write(start + written)
        precondition(length >= 0 && length <= maxBytes, "wrote more than it reserved")
        written &+= length
    }

    @inlinable @inline(__always)
    public mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { append(UnsafeRawBufferPointer($0)) }
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Appends `value` in decimal (ASCII digits, a leading `-` when negative). Up to 8 digits
    /// (counts, offsets, limits) are built in one word and stored at once; longer numbers go
    /// right to left through a 20-byte scratch.
    @inlinable
    public mutating func appendDecimal(_ value: Int) {
        reserve(20)  // Int.min is 20 characters
        if value >= 0, value < 100_000_000 {
            var rest = value
            var word: UInt64 = 0
            var length = 0
            repeat {  // the last digit first, ending with the first digit in the low byte
                word = word &<< 8 | UInt64(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10))
                rest /= 10
                length &+= 1
            } while rest > 0
            (start + written).storeBytes(of: word.littleEndian, as: UInt64.self)
            written &+= length
            return
        }
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes
        let length = withUnsafeMutableBytes(of: &scratch) { digits -> Int in
            var magnitude = value.magnitude
            var position = digits.count
            repeat {
                position -= 1
                digits[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                position -= 1
                digits[position] = UInt8(ascii: "-")
            }
            (start + written).copyMemory(from: digits.baseAddress! + position, byteCount: digits.count - position)
            return digits.count - position
        }
        written &+= length
    }

    /// Calls `body` with the bytes written so far, valid only during the call.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: start, count: written))
    }

    /// A copy of the bytes written so far.
    public var bytes: [UInt8] {
        withUnsafeBytes { [UInt8]($0) }
    }

    /// Hands the bytes to an immutable ``ResponseBody`` (the memory moves; nothing is copied).
    public consuming func finish() -> ResponseBody {
        let body = ResponseBody(start: start, count: written, capacity: capacity)
        discard self
        return body
    }
}

/// One spare body block per thread: a server thread's next response reuses the memory of the
/// last one it sent instead of a `malloc`/`free` pair per request (and, for a body that outgrew
/// ``minimumSize``, instead of growing a new block by doubling each time: a page of 50 rows is
/// 8.8 KB, which made a `malloc`, a `realloc` copying 8 KB and a `free` of 16 KB per page while
/// only blocks of exactly 8 KB were kept).
///
/// Invariant: a thread's slot (a pthread key, freed with `free` when the thread exits) holds nil
/// or one `malloc` block of at least ``minimumSize`` and at most ``maximumKept`` bytes that
/// nothing else refers to, with its size in a second key. A block larger than ``maximumKept`` (a
/// long search result, say) is freed as usual, so a thread keeps 64 KiB at most.
enum SpareBlock {
    /// The smallest block made for a body: most bodies (errors, counts, a toggle's answer) fit.
    static let minimumSize = 8192
    /// The largest block a thread keeps for its next body.
    static let maximumKept = 65536

    private static let blockKey: pthread_key_t = {
        var key = pthread_key_t()
        guard pthread_key_create(&key, { free($0) }) == 0 else { fatalError("pthread_key_create failed") }
        return key
    }()

    /// The size of the block in ``blockKey``'s slot, as a pointer's bit pattern (no destructor).
    private static let sizeKey: pthread_key_t = {
        var key = pthread_key_t()
        guard pthread_key_create(&key, nil) == 0 else { fatalError("pthread_key_create failed") }
        return key
    }()

    /// A block of at least `capacity` bytes and its size: this thread's spare when it is big
    /// enough, else a new one (of ``minimumSize`` at least; a spare too small is freed).
    static func take(atLeast capacity: Int) -> (UnsafeMutableRawPointer, Int) {
        if let spare = pthread_getspecific(blockKey) {
            let spareSize = Int(bitPattern: pthread_getspecific(sizeKey))
            pthread_setspecific(blockKey, nil)
            if spareSize >= capacity { return (spare, spareSize) }
            free(spare)
        }
        let size = max(capacity, minimumSize)
        guard let block = malloc(size) else { fatalError("out of memory (\(size) bytes)") }
        return (block, size)
    }

    /// Keeps `block` as this thread's spare when its size is at most ``maximumKept`` and the slot
    /// is free; frees it otherwise.
    static func release(_ block: UnsafeMutableRawPointer, capacity: Int) {
        if capacity >= minimumSize, capacity <= maximumKept, pthread_getspecific(blockKey) == nil {
            pthread_setspecific(sizeKey, UnsafeRawPointer(bitPattern: capacity))
            pthread_setspecific(blockKey, block)
        } else {
            free(block)
        }
    }

    /// The size of this thread's spare block, 0 when it has none.
    static var keptSize: Int {
        pthread_getspecific(blockKey) == nil ? 0 : Int(bitPattern: pthread_getspecific(sizeKey))
    }
}
