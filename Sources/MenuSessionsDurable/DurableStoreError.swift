/// Why the data directory cannot be used at start-up (missing, not a directory, not writable,
/// in use by another process, unreadable files). `RunningServer` turns it into a start-up error,
/// and `menu-server` exits 2 with ``description``, which always names the directory.
package struct DurableStoreError: Error, Sendable, CustomStringConvertible {
    package var directory: String
    package var reason: String

    init(directory: String, _ reason: String) {
        self.directory = directory
        self.reason = reason
    }

    package var description: String { "cannot use data directory \(directory): \(reason)" }
}
