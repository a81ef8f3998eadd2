#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The name/value pairs of a request: its headers, or its query arguments. They are kept as one
/// UTF-8 byte block plus offsets (which a request's headers and query share), so copying a
/// request's fields costs two allocations however many there are, and a `String` is made only for
/// a field read as one.
///
/// Invariant: field `p` is `entries[base + p]` for `p` in `0 ..< fieldCount`; an entry names
/// `bytes[nameStart ..< nameStart + nameLength]` and, when `valueLength >= 0`, the value
/// `bytes[valueStart ..< valueStart + valueLength]`; a negative `valueLength` is a field without a
/// value (`?flag`). Wire order and duplicates are kept. Appending is only for building: it keeps
/// the invariant while this value's fields are the last entries of the storage.
/// Iterating yields `(name, value)` with `String`s made on the fly; ``firstValue(named:)``,
/// ``count(named:)`` and ``withValue(at:_:)`` compare and read bytes without making any.
public struct HTTPFields: Sendable, RandomAccessCollection, CustomStringConvertible {
    struct Entry: Sendable {
        var nameStart: Int32
        var nameLength: Int32
        var valueStart: Int32
        var valueLength: Int32
    }

    private var bytes: [UInt8] = []
    private var entries: [Entry] = []
    private var base = 0
    private var fieldCount = 0

    /// No fields.
    public init() {}

    /// The given fields, in order.
    public init(_ pairs: [(name: String, value: String?)]) {
        for pair in pairs {
            var name = pair.name
            name.withUTF8 { name in
                if var value = pair.value {
                    value.withUTF8 { append(name: UnsafeRawBufferPointer(name), value: UnsafeRawBufferPointer($0)) }
                } else {
                    append(name: UnsafeRawBufferPointer(name), value: nil)
                }
            }
        }
    }

    /// Room for `count` fields of `bytes` bytes in all.
    mutating func reserveCapacity(fields count: Int, bytes byteCount: Int) {
        entries.reserveCapacity(count)
        bytes.reserveCapacity(byteCount)
    }

    /// Appends a field; with `lowercasingName`, ASCII letters of the name are lowercased as they are copied.
    mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?, lowercasingName: Bool = false) {
        let nameStart = bytes.count
        bytes.append(contentsOf: name)
        if lowercasingName {
            bytes.withUnsafeMutableBufferPointer { all in
                for index in nameStart ..< all.count { all[index] = asciiLowercased(all[index]) }
            }
        }
        let valueStart = bytes.count
        if let value { bytes.append(contentsOf: value) }
        entries.append(Entry(
            nameStart: Int32(nameStart), nameLength: Int32(name.count),
            valueStart: Int32(valueStart), valueLength: value.map { Int32($0.count) } ?? -1))
        fieldCount += 1
    }

    /// Splits built fields in two that share this storage: fields `0 ..< boundary`, and the rest.
    func split(at boundary: Int) -> (HTTPFields, HTTPFields) {
        var head = self
        head.fieldCount = boundary
        var tail = self
        tail.base = base + boundary
        tail.fieldCount = fieldCount - boundary
        return (head, tail)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { fieldCount }

    /// The field at `position`, as `String`s (invalid UTF-8 repaired).
    public subscript(position: Int) -> (name: String, value: String?) {
        (name(at: position), value(at: position))
    }

    /// The name of the field at `position`.
    public func name(at position: Int) -> String {
        let entry = entries[base &+ position]
        return String(decoding: bytes[Int(entry.nameStart) ..< Int(entry.nameStart + entry.nameLength)], as: UTF8.self)
    }

    /// The value of the field at `position`; nil for a field without one.
    public func value(at position: Int) -> String? {
        let entry = entries[base &+ position]
        guard entry.valueLength >= 0 else { return nil }
        return String(decoding: bytes[Int(entry.valueStart) ..< Int(entry.valueStart + entry.valueLength)], as: UTF8.self)
    }

    /// Whether the name of the field at `position` is exactly `name` (bytes compared as given).
    public func name(at position: Int, equals name: StaticString) -> Bool {
        let entry = entries[base &+ position]
        return Int(entry.nameLength) == name.utf8CodeUnitCount && nameStarts(entry, with: name)
    }

    /// Whether the name of the field at `position` starts with `prefix` (bytes compared as given).
    public func name(at position: Int, hasPrefix prefix: StaticString) -> Bool {
        let entry = entries[base &+ position]
        return Int(entry.nameLength) >= prefix.utf8CodeUnitCount && nameStarts(entry, with: prefix)
    }

    private func nameStarts(_ entry: Entry, with prefix: StaticString) -> Bool {
        bytes.withUnsafeBufferPointer { all in
            memcmp(all.baseAddress! + Int(entry.nameStart), prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
        }
    }

    /// How many fields are called exactly `name`.
    public func count(named name: StaticString) -> Int {
        var found = 0
        for position in indices where self.name(at: position, equals: name) { found += 1 }
        return found
    }

    /// The position of the first field called exactly `name`.
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
    public func withValue<Result>(at position: Int, _ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        let entry = entries[base &+ position]
        guard entry.valueLength >= 0 else { return try body(nil) }
        return try bytes.withUnsafeBytes { all in
            try body(UnsafeRawBufferPointer(rebasing: all[Int(entry.valueStart) ..< Int(entry.valueStart + entry.valueLength)]))
        }
    }

    public var description: String {
        map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "&")
    }
}
