import Dispatch
import MenuAvailability
import MenuModel
import MenuSessions
import Synchronization

/// Where the availability overlay is kept beyond the process's memory: the data directory (a
/// restart keeps it) or Redis (every instance on it shares it). ``MenuAPI`` keeps each accepted
/// overlay here before serving it: a batch whose overlay could not be kept is refused, not
/// acknowledged and lost.
package protocol AvailabilityKeeper: Sendable {
    /// The overlay kept last (nil: none yet), read once when the service starts.
    var keptOverlay: AvailabilityOverlay? { get }
    /// Keeps `overlay` in place of the one kept before, which the caller had at revision
    /// `previous`; durable when it returns. A shared keeper refuses when another writer kept
    /// another revision meanwhile (``AvailabilityNotKept/current``).
    func keep(_ overlay: AvailabilityOverlay, over previous: Int) throws(AvailabilityNotKept)
    /// Calls `adopt` with each overlay another writer keeps from now on (a shared keeper; the
    /// others never call it). `adopt` may run on any thread.
    func follow(_ adopt: @escaping @Sendable (AvailabilityOverlay) -> Void)
}

extension AvailabilityKeeper {
    package func follow(_ adopt: @escaping @Sendable (AvailabilityOverlay) -> Void) {}
}

/// Why an overlay could not be kept (the message names the file or the server and the error).
package struct AvailabilityNotKept: Error, Sendable, CustomStringConvertible {
    package var description: String
    /// Set when another writer kept another overlay first: that one, to apply the batch to again.
    package var current: AvailabilityOverlay?
    package init(_ description: String, current: AvailabilityOverlay? = nil) {
        self.description = description
        self.current = current
    }
}

/// A batch of availability changes that was applied.
package struct AvailabilityUpdate: Sendable, Equatable {
    /// The overlay's revision after the batch (as before when nothing changed).
    package let revision: Int
    /// The ids whose availability changed, in the batch's order.
    package let changed: [String]

    package init(revision: Int, changed: [String]) {
        self.revision = revision
        self.changed = changed
    }
}

/// Why a batch was not applied.
package enum AvailabilityUpdateError: Error, Sendable, CustomStringConvertible {
    /// The batch itself: unknown ids, an id twice, a time not ahead (`400`).
    case refused(AvailabilityOverlay.Refusal)
    /// The overlay could not be kept (`503`): nothing changed.
    case notKept(AvailabilityNotKept)

    package var description: String {
        switch self {
        case .refused(let refusal): refusal.description
        case .notKept(let problem): "the availability could not be kept: \(problem); nothing was changed"
        }
    }
}

extension MenuAPI {
    /// Applies `changes` all or none (``AvailabilityOverlay/applying(_:on:now:)``) to the served
    /// menu's overlay, after advancing it to `now` (entries due ended, hours applied); keeps the result
    /// (``AvailabilityKeeper``) and serves it. Runs one at a time with reloads. O(changes) plus
    /// the served marks' O(k · depth + n/64) when something changed.
    package func updateAvailability(_ changes: [AvailabilityOverlay.Change], now given: Timestamp? = nil)
        throws(AvailabilityUpdateError) -> AvailabilityUpdate
    {
        let now = given ?? self.now
        let update = try installing.withLock { _ throws(AvailabilityUpdateError) -> AvailabilityUpdate in
            // Against a shared keeper another instance may keep first: then again on its overlay.
            for _ in 0 ..< Self.availabilityAttempts {
                let menu = current
                let before = menu.availability.overlay
                let next: AvailabilityOverlay
                let changed: [String]
                do throws(AvailabilityOverlay.Refusal) {
                    (next, changed) = try before.advanced(to: now, hours: menu.hours).overlay.applying(
                        changes, on: menu.published, now: now)
                } catch {
                    throw .refused(error)
                }
                if next != before, let availabilityKeeper {
                    do throws(AvailabilityNotKept) {
                        try availabilityKeeper.keep(next, over: before.revision)
                    } catch {
                        guard let theirs = error.current else { throw .notKept(error) }
                        serve(theirs, on: menu, now: now)
                        continue
                    }
                }
                if next != before { serve(next, on: menu, now: now) }
                return AvailabilityUpdate(revision: next.revision, changed: changed)
            }
            throw .notKept(
                AvailabilityNotKept("other instances kept \(Self.availabilityAttempts) overlays first; send it again"))
        }
        return update
    }

    /// What is not available at `now` by the admin API's entries and the opening hours (sorted by
    /// id; a node closed by hours shows `closed`), and the overlay's revision.
    package func availabilityEntries(now given: Timestamp? = nil) -> (revision: Int, entries: [(String, Availability)])
    {
        let menu = current
        let overlay = menu.availability.overlay.advanced(to: given ?? now, hours: menu.hours).overlay
        let entries = overlay.shownEntries.sorted { $0.key < $1.key }
        return (overlay.revision, entries.map { ($0.key, $0.value) })
    }

    /// Advances the overlay to `now` (``AvailabilityOverlay/advanced(to:hours:)``: entries due
    /// ended, the nodes the hours close then closed): a new overlay revision, kept and served,
    /// when anything changed. Returns the ids whose availability changed.
    @discardableResult
    package func expireAvailability(now given: Timestamp? = nil) -> [String] {
        let now = given ?? self.now
        let expired = installing.withLock { _ -> [String] in
            let menu = current
            let (next, expired) = menu.availability.overlay.advanced(to: now, hours: menu.hours)
            guard !expired.isEmpty else { return [] }
            // Not kept is not lost: a kept entry past its time is ended again when it is read back,
            // and another instance that kept first has ended it too.
            if let theirs = keepAvailability(next, over: menu.availability.overlay.revision) {
                serve(theirs, on: menu, now: now)
                return []
            }
            serve(next, on: menu, now: now)
            return expired
        }
        scheduleAvailabilityExpiry()  // also when the timer fired before anything was due
        return expired
    }

    /// Serves `overlay` on `menu` (under ``installing``): every feed and stream is told, and the
    /// timer is set for its next end. Every change of the overlay served goes through here. When
    /// it hides other nodes than `menu` does, the listing without them is served as the next
    /// generation, as a reload is (O(n), ``Menu/hiding(_:)``); otherwise O(k · depth + n/64).
    private func serve(_ overlay: AvailabilityOverlay, on menu: ServedMenu, now: Timestamp) {
        let hidden = ServedMenu.hiddenIDs(of: menu.published, showing: overlay, hours: menu.hours, now: now)
        guard hidden == menu.hiddenIDs else {
            _ = installListing(
                of: menu.published, hiding: hidden, availability: overlay,
                droppedAtReload: menu.availability.droppedAtReload, now: now)
            return
        }
        serve(menu.with(overlay, now: now))
        changeWaits.releaseAll()
        scheduleAvailabilityExpiry()
    }

    /// Keeps `overlay` when it is not the result of a request (an expiry, a reload): a failure
    /// leaves the last kept overlay, which is reconciled the same way when read back. Returns the
    /// overlay another instance kept first, if one did.
    @discardableResult
    func keepAvailability(_ overlay: AvailabilityOverlay, over previous: Int) -> AvailabilityOverlay? {
        guard let availabilityKeeper else { return nil }
        do throws(AvailabilityNotKept) { try availabilityKeeper.keep(overlay, over: previous) } catch {
            return error.current
        }
        return nil
    }

    /// How many times a batch is applied again after another instance kept first.
    static let availabilityAttempts = 8

    /// Serves `overlay`, kept by another instance, when it is newer than the one served; feeds
    /// and streams are told. O(k · depth + n/64) when it is.
    package func adoptAvailability(_ overlay: AvailabilityOverlay) {
        installing.withLock { _ in
            let menu = current
            guard overlay.revision > menu.availability.overlay.revision else { return }
            serve(overlay, on: menu, now: now)
        }
    }

    /// Starts a timer for the served availability's next change (an entry's `until`, an opening
    /// or closing of the hours) unless one runs for that time or earlier; when it fires it
    /// advances the overlay and starts the next. The timer holds the service weakly.
    func scheduleAvailabilityExpiry() {
        guard let next = current.availability.nextChangeAt, availabilityExpiry.claim(next) else { return }
        let delay = max(0, next.milliseconds - now.milliseconds) + 1
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(Int(min(delay, 86_400_000)))) {
            [weak self] in
            guard let self else { return }
            availabilityExpiry.fired(next)
            expireAvailability()
        }
    }
}

/// The one timer for the overlay's next end: which instant it is set for, so that a batch starts
/// another only for an earlier one.
///
/// Invariant: `scheduled` is the earliest instant a timer is running for, or nil when none is.
final class AvailabilityExpiry: Sendable {
    private let scheduled = Mutex<Timestamp?>(nil)

    /// True when a timer must be started for `instant` (none runs for it or earlier); it is then
    /// the one recorded.
    func claim(_ instant: Timestamp) -> Bool {
        scheduled.withLock { scheduled in
            if let running = scheduled, running <= instant { return false }
            scheduled = instant
            return true
        }
    }

    /// The timer for `instant` fired.
    func fired(_ instant: Timestamp) {
        scheduled.withLock { if $0 == instant { $0 = nil } }
    }
}
