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
/// (0x21...0x7E), so it can go into a header and a log line as it is. A made id is 24 lowercase
/// hex digits: 8 fixed per process (random), 12 of the monotonic clock in nanoseconds at the
/// request's start, 4 of the calling thread; two requests on one thread never start in the same
/// nanosecond, so made ids do not repeat within a process.
/// Cost: checking a client's id is one pass over it; making one formats 24 digits (one small
/// allocation for the string).
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
    public init(madeAt startNanoseconds: Int) {
        // The thread's control block address: threads' blocks lie a stack apart (megabytes).
        #if canImport(Darwin)
        let thread = UInt64(UInt(bitPattern: pthread_self())) >> 12
        #else
        let thread = UInt64(pthread_self()) >> 12
        #endif
        value = String(unsafeUninitializedCapacity: 24) { buffer in
            Self.writeHex(Self.processPrefix, digits: 8, into: buffer, at: 0)
            Self.writeHex(UInt64(truncatingIfNeeded: startNanoseconds), digits: 12, into: buffer, at: 8)
            Self.writeHex(thread, digits: 4, into: buffer, at: 20)
            return 24
        }
    }

    /// Random per process, so ids of two processes (or one restarted) hardly meet.
    private static let processPrefix = UInt64.random(in: 0 ... UInt64(UInt32.max))

    private static func writeHex(_ value: UInt64, digits: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        var rest = value
        for position in stride(from: start + digits - 1, through: start, by: -1) {
            let digit = UInt8(truncatingIfNeeded: rest & 0xF)
            buffer[position] = digit < 10 ? 0x30 + digit : 0x57 + digit
            rest >>= 4
        }
    }
}
