#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The name/value pairs of a request: its headers, or its query arguments (or, in one field's
/// value, its path). They are kept in one block (entries, then the UTF-8 bytes of names and
/// values) which a request's path, query and headers share, so copying a request's fields costs
/// one allocation however many there are (two for a request larger than the first guess), and a
/// `String` is made only for a field read as one.
///
/// Invariant: field `p` is entry `base + p` of `storage`, for `p` in `0 ..< fieldCount`; an entry
/// names bytes `nameStart ..< nameStart + nameLength` and, when `valueLength >= 0`, the value
/// `valueStart ..< valueStart + valueLength`; a negative `valueLength` is a field without a value
/// (`?flag`). Wire order and duplicates are kept. Storage is written once, by
/// ``filled(fields:bytes:_:)`` or ``filled(expectingFields:bytes:_:)``, and never changes after.
/// Iterating yields `(name, value)` with `String`s made on the fly; ``firstValue(named:)``,
/// ``count(named:)`` and ``withValue(at:_:)`` compare and read bytes without making any.
public struct HTTPFields: Sendable, RandomAccessCollection, CustomStringConvertible {
    @usableFromInline
    package struct Entry: Sendable {
        @usableFromInline var nameStart: Int32
        @usableFromInline var nameLength: Int32
        @usableFromInline var valueStart: Int32
        @usableFromInline var valueLength: Int32

        init(nameStart: Int32, nameLength: Int32, valueStart: Int32, valueLength: Int32) {
            self.nameStart = nameStart
            self.nameLength = nameLength
            self.valueStart = valueStart
            self.valueLength = valueLength
        }
    }

    /// The block shared by the fields of one request: one allocation holding the entries, then
    /// the bytes (the header is the entry capacity).
    @usableFromInline
    final class Block: ManagedBuffer<Int, Entry> {}

    /// A ``Block``, immutable once the `filled` function that made it returns, which is what
    /// makes it `Sendable` (`ManagedBuffer` itself is not).
    @usableFromInline
    struct Storage: @unchecked Sendable {
        @usableFromInline let block: Block

        /// Room for `fields` entries and `bytes` bytes.
        init(fields: Int, bytes: Int) {
            let stride = MemoryLayout<Entry>.stride
            let made = Block.create(minimumCapacity: Swift.max(1, fields + (bytes + stride - 1) / stride)) { _ in fields
            }
            block = unsafeDowncast(made, to: Block.self)
            _ = UnsafeMutableRawPointer(self.bytes).bindMemory(to: UInt8.self, capacity: bytes)
        }

        /// The entries, valid while the block lives.
        @usableFromInline var entries: UnsafeMutablePointer<Entry> {
            block.withUnsafeMutablePointerToElements { $0 }
        }

        /// The bytes after the entries, valid while the block lives.
        @usableFromInline var bytes: UnsafeMutablePointer<UInt8> {
            block.withUnsafeMutablePointers { fieldCapacity, entries in
                UnsafeMutableRawPointer(entries + fieldCapacity.pointee).assumingMemoryBound(to: UInt8.self)
            }
        }
    }

    // Internal rather than private so the byte-level reads below can be inlined into callers.
    @usableFromInline var storage: Storage?
    @usableFromInline var base = 0
    @usableFromInline var fieldCount = 0

    /// No fields.
    public init() {}

    /// The given fields, in order.
    public init(_ pairs: [(name: String, value: String?)]) {
        let byteCount = pairs.reduce(0) { $0 + $1.name.utf8.count + ($1.value?.utf8.count ?? 0) }
        self = Self.filled(fields: pairs.count, bytes: byteCount) { writer in
            for pair in pairs {
                var name = pair.name
                name.withUTF8 { name in
                    if var value = pair.value {
                        value.withUTF8 {
                            _ = writer.append(name: UnsafeRawBufferPointer(name), value: UnsafeRawBufferPointer($0))
                        }
                    } else {
                        _ = writer.append(name: UnsafeRawBufferPointer(name), value: nil)
                    }
                }
            }
        }
    }

    /// Writes fields into storage of a size fixed in advance (no growth, no per-field allocation).
    ///
    /// Invariant: the first `byteCount` bytes and `fieldCount` entries are written, and every
    /// entry points inside the first `byteCount` bytes; `neededFields` and `neededBytes` count
    /// every field offered, refused ones included.
    package struct Writer {
        let bytes: UnsafeMutableRawBufferPointer
        let entries: UnsafeMutableBufferPointer<Entry>
        private(set) var byteCount = 0
        private(set) var fieldCount = 0
        package private(set) var neededFields = 0
        package private(set) var neededBytes = 0
        /// Whether a field was refused for want of room.
        var overflowed: Bool { neededFields > fieldCount }

        package init(bytes: UnsafeMutableRawBufferPointer, entries: UnsafeMutableBufferPointer<Entry>) {
            self.bytes = bytes
            self.entries = entries
        }

        /// Appends a field, ASCII letters of the name lowercased with `lowercasingName`; returns
        /// false, writing nothing, when it does not fit.
        package mutating func append(
            name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?, lowercasingName: Bool = false
        ) -> Bool {
            let valueCount = value?.count ?? 0
            neededFields += 1
            neededBytes += name.count + valueCount
            guard fieldCount < entries.count, name.count + valueCount <= bytes.count - byteCount,
                byteCount + name.count + valueCount <= Int(Int32.max)
            else { return false }
            let nameStart = byteCount
            if lowercasingName, let source = name.baseAddress {
                copyASCIILowercased(from: source, to: bytes.baseAddress! + nameStart, count: name.count)
            } else if let source = name.baseAddress, !name.isEmpty {
                (bytes.baseAddress! + nameStart).copyMemory(from: source, byteCount: name.count)
            }
            let valueStart = nameStart + name.count
            if let value, let source = value.baseAddress, !value.isEmpty {
                (bytes.baseAddress! + valueStart).copyMemory(from: source, byteCount: value.count)
            }
            entries[fieldCount] = Entry(
                nameStart: Int32(nameStart), nameLength: Int32(name.count),
                valueStart: Int32(valueStart), valueLength: value.map { Int32($0.count) } ?? -1)
            byteCount = valueStart + valueCount
            fieldCount += 1
            return true
        }
    }

    /// The fields `fill` writes into storage for at most `fields` fields of `bytes` bytes in all
    /// (what does not fit is refused by ``Writer/append(name:value:lowercasingName:)``).
    package static func filled(fields: Int, bytes: Int, _ fill: (inout Writer) -> Void) -> HTTPFields {
        write(into: Storage(fields: fields, bytes: bytes), fields: fields, bytes: bytes, fill).fields
    }

    /// The fields `fill` writes, in one pass when they fit `expectedFields` fields of
    /// `expectedBytes` bytes, else in a second pass into storage of exactly the size the first
    /// one counted. `fill` must offer the same fields each time it is called.
    package static func filled(
        expectingFields expectedFields: Int, bytes expectedBytes: Int, _ fill: (inout Writer) -> Void
    ) -> HTTPFields {
        let first = write(
            into: Storage(fields: expectedFields, bytes: expectedBytes), fields: expectedFields,
            bytes: expectedBytes, fill)
        guard first.overflowed else { return first.fields }
        return filled(fields: first.neededFields, bytes: first.neededBytes, fill)
    }

    private static func write(into storage: Storage, fields: Int, bytes: Int, _ fill: (inout Writer) -> Void)
        -> (fields: HTTPFields, overflowed: Bool, neededFields: Int, neededBytes: Int)
    {
        var writer = Writer(
            bytes: UnsafeMutableRawBufferPointer(start: storage.bytes, count: bytes),
            entries: UnsafeMutableBufferPointer(start: storage.entries, count: fields))
        fill(&writer)
        var result = HTTPFields()
        if writer.fieldCount > 0 {
            result.storage = storage
            result.fieldCount = writer.fieldCount
        }
        return (result, writer.overflowed, writer.neededFields, writer.neededBytes)
    }

    /// Splits built fields in two that share this storage: fields `0 ..< boundary`, and the rest.
    package func split(at boundary: Int) -> (HTTPFields, HTTPFields) {
        var head = self
        head.fieldCount = boundary
        var tail = self
        tail.base = base + boundary
        tail.fieldCount = fieldCount - boundary
        return (head, tail)
    }

    public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { fieldCount }

    /// The field at `position`, as `String`s (invalid UTF-8 repaired).
    public subscript(position: Int) -> (name: String, value: String?) {
        (name(at: position), value(at: position))
    }

    /// The name of the field at `position`.
    public func name(at position: Int) -> String {
        let entry = self.entry(at: position)
        return String(decoding: bytes(Int(entry.nameStart), Int(entry.nameLength)), as: UTF8.self)
    }

    /// The value of the field at `position`; nil for a field without one.
    public func value(at position: Int) -> String? {
        let entry = self.entry(at: position)
        guard entry.valueLength >= 0 else { return nil }
        return String(decoding: bytes(Int(entry.valueStart), Int(entry.valueLength)), as: UTF8.self)
    }

    @inlinable @inline(__always)
    func entry(at position: Int) -> Entry {
        precondition(position >= 0 && position < fieldCount, "field position \(position) out of range")
        return storage!.entries[base &+ position]
    }

    /// `count` bytes from `start`, valid while `storage` lives (`self` keeps it).
    @inlinable @inline(__always)
    func bytes(_ start: Int, _ count: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: storage!.bytes + start, count: count)
    }

    /// Whether the name of the field at `position` is exactly `name` (bytes compared as given).
    @inlinable
    public func name(at position: Int, equals name: StaticString) -> Bool {
        let entry = self.entry(at: position)
        return Int(entry.nameLength) == name.utf8CodeUnitCount && nameStarts(entry, with: name)
    }

    /// Whether the name of the field at `position` starts with `prefix` (bytes compared as given).
    @inlinable
    public func name(at position: Int, hasPrefix prefix: StaticString) -> Bool {
        let entry = self.entry(at: position)
        return Int(entry.nameLength) >= prefix.utf8CodeUnitCount && nameStarts(entry, with: prefix)
    }

    @inlinable
    func nameStarts(_ entry: Entry, with prefix: StaticString) -> Bool {
        withExtendedLifetime(storage) {
            memcmp(
                bytes(Int(entry.nameStart), prefix.utf8CodeUnitCount).baseAddress!, prefix.utf8Start,
                prefix.utf8CodeUnitCount) == 0
        }
    }

    /// How many fields are called exactly `name`.
    @inlinable
    public func count(named name: StaticString) -> Int {
        var found = 0
        for position in indices where self.name(at: position, equals: name) { found += 1 }
        return found
    }

    /// The position of the first field called exactly `name`.
    @inlinable
    public func firstIndex(named name: StaticString) -> Int? {
        for position in indices where self.name(at: position, equals: name) { return position }
        return nil
    }

    /// The value of the first field called exactly `name` (nil when there is none, or it has no value).
    public func firstValue(named name: StaticString) -> String? {
        firstIndex(named: name).flatMap { value(at: $0) }
    }

    /// Calls `body` with the value bytes of the field at `position` (nil for a field without a
    /// value), valid only during the call.
    @inlinable
    public func withValue<Result>(at position: Int, _ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows
        -> Result
    {
        let entry = self.entry(at: position)
        guard entry.valueLength >= 0 else { return try body(nil) }
        return try withExtendedLifetime(storage) {
            try body(UnsafeRawBufferPointer(bytes(Int(entry.valueStart), Int(entry.valueLength))))
        }
    }

    public var description: String {
        map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "&")
    }
}
