import Synchronization

/// A value shared between threads behind a lock.
package final class LiveLocked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    package init(_ value: Value) { storage = Mutex(value) }
    package var value: Value { storage.withLock { $0 } }
    package func set(_ value: Value) { storage.withLock { $0 = value } }
    package func update<R: Sendable>(_ body: (inout Value) -> R) -> R { storage.withLock { body(&$0) } }
}
