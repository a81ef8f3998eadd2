import Synchronization

/// The last few values computed for instants, each with the span of instants it holds for (from
/// the instant asked about to the next change, in milliseconds): what the hours say between two
/// boundaries (``MenuHours/state(at:)``), and a menu as `?at=` shows it, are the same at every
/// instant of the span.
///
/// Invariant: at most ``capacity`` entries, the oldest replaced first. Cost: O(capacity) a
/// lookup or a keep, under a lock.
public final class SpanCache<Value: Sendable>: Sendable {
    public static var capacity: Int { 8 }
    private struct Entry {
        var from: Int64
        var until: Int64
        var value: Value
    }
    private let entries = Mutex<(list: [Entry], next: Int)>(([], 0))

    public init() {}

    /// The value kept for a span that holds `milliseconds`, if any.
    public func value(at milliseconds: Int64) -> Value? {
        entries.withLock { entries in
            entries.list.first { $0.from <= milliseconds && milliseconds < $0.until }?.value
        }
    }

    /// Keeps `value` for the instants from `from` up to (not including) `until`.
    public func keep(_ value: Value, from: Int64, until: Int64) {
        entries.withLock { entries in
            let entry = Entry(from: from, until: until, value: value)
            if entries.list.count < Self.capacity {
                entries.list.append(entry)
            } else {
                entries.list[entries.next] = entry
                entries.next = (entries.next + 1) % Self.capacity
            }
        }
    }
}
