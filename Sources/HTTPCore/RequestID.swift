#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A request's id as a log line and the response's `X-Request-Id` name it: the client's own when
/// it sent a sane one, otherwise one made here.
///
/// Invariant: ``value`` is 1 to ``maxLength`` bytes, each printable ASCII other than space
/// (0x21...0x7E), so it can go into a header and a log line as it is. A made id is 15 characters
/// of the URL-safe base64 alphabet (`A-Z a-z 0-9 - _`): 4 fixed per process (24 random bits), 8 of
/// the monotonic clock in nanoseconds at the request's start (48 bits: they repeat after 78
/// hours), 3 of the calling thread; two requests on one thread never start in the same
/// nanosecond, so made ids do not repeat within a process's 78 hours.
/// Cost: checking a client's id is one pass over it; a made id fits a small string (15 bytes):
/// no allocation.
public struct RequestID: Sendable, Equatable {
    /// The longest id accepted from a client.
    public static let maxLength = 128

    public let value: String

    /// The client's `X-Request-Id` when it is sane (see the invariant); nil otherwise (absent,
    /// empty, too long, a space, a control byte or a non-ASCII byte), and the caller makes one.
    public init?(client text: String?) {
        guard let text, Self.isSane(text) else { return nil }
        value = text
    }

    /// Whether `text` may be used as an id as it is.
    public static func isSane(_ text: String) -> Bool {
        let bytes = text.utf8
        return !bytes.isEmpty && bytes.count <= maxLength && bytes.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }

    /// A made id for a request that started at `startNanoseconds` of the monotonic clock.
    /// The length of a made id.
    public static let madeLength = 15

    public init(madeAt startNanoseconds: Int) {
        // The thread's control block address: threads' blocks lie a stack apart (megabytes).
        #if canImport(Darwin)
        let thread = UInt64(UInt(bitPattern: pthread_self())) >> 12
        #else
        let thread = UInt64(pthread_self()) >> 12
        #endif
        value = String(unsafeUninitializedCapacity: Self.madeLength) { buffer in
            Self.write(Self.processPrefix, digits: 4, into: buffer, at: 0)
            Self.write(UInt64(truncatingIfNeeded: startNanoseconds), digits: 8, into: buffer, at: 4)
            Self.write(thread, digits: 3, into: buffer, at: 12)
            return Self.madeLength
        }
    }

    /// Whether `text` has the form of a made id (its length and alphabet).
    public static func isMade(_ text: String) -> Bool {
        let alphabet = UnsafeBufferPointer(start: Self.alphabet.utf8Start, count: Self.alphabet.utf8CodeUnitCount)
        return text.utf8.count == madeLength && text.utf8.allSatisfy { alphabet.contains($0) }
    }

    /// Random per process, so ids of two processes (or one restarted) hardly meet.
    private static let processPrefix = UInt64.random(in: 0 ..< 1 << 24)
    /// A literal rather than an array: read without a lazy global's check and a bounds check.
    private static var alphabet: StaticString { "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" }

    /// The low `digits` × 6 bits of `value`, most significant first, in ``alphabet``.
    private static func write(
        _ value: UInt64, digits: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int
    ) {
        let alphabet = Self.alphabet.utf8Start
        var rest = value
        for position in stride(from: start + digits - 1, through: start, by: -1) {
            buffer[position] = alphabet[Int(rest & 63)]
            rest >>= 6
        }
    }
}
