/// Whether a node can be ordered now, as the admin API sets it: kept beside the menu, by node id,
/// never in it (the menu's `version` and every session's tag for its own state stay as they are).
public enum AvailabilityState: String, Sendable, CaseIterable {
    case available
    /// Out of stock: back when restocked (or at `until`).
    case soldOut = "sold_out"
    /// Taken off for now (the kitchen, a supplier): back when put back (or at `until`).
    case paused
    /// Outside the node's opening hours (its own or a group's): back when they open (`until`).
    /// Set by the menu's hours (``MenuHours``), never by the admin API.
    case closed

    /// The states a batch of the admin API may set.
    public static let settable: [AvailabilityState] = [.available, .soldOut, .paused]
}

/// A node's availability when it is not plainly available: its state, when that ends by itself,
/// and a reason to show (free text, at most ``reasonLimit`` bytes of UTF-8).
public struct Availability: Sendable, Equatable {
    public var state: AvailabilityState
    public var until: Timestamp?
    public var reason: String?

    public static let reasonLimit = 200

    public init(state: AvailabilityState, until: Timestamp? = nil, reason: String? = nil) {
        self.state = state
        self.until = until
        self.reason = reason
    }
}
