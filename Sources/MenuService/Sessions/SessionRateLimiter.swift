import HTTPCore
import MenuSessions
import Synchronization

/// How often one client may create sessions: a token bucket per client address (an IPv6
/// client's /64), `perMinute` tokens deep and refilled at `perMinute` a minute; a creation takes
/// one token.
///
/// Buckets live in a fixed table of ``shardCount`` × ``bucketsPerShard`` places, each shard behind
/// its own `Mutex`, found by a hash of the address (seeded per process): memory is bounded
/// whatever the number of addresses, and an address whose place another one took starts again
/// with a full bucket (never fewer tokens than its own).
/// Cost: one hash and one short lock per creation; nothing on reads.
package final class SessionRateLimiter: Sendable {
    static var shardCount: Int { 64 }
    static var bucketsPerShard: Int { 1024 }
    /// A token in the buckets' unit: token-milliseconds at one token a minute per `perMinute`.
    private static var token: Int64 { 60_000 }

    package let perMinute: Int
    private let clock: @Sendable () -> SessionTime
    private let shards: [Shard]

    private final class Shard: Sendable {
        let buckets: Mutex<[Bucket]>
        init(_ buckets: [Bucket]) { self.buckets = Mutex(buckets) }
    }

    private struct Bucket: Sendable {
        var address: IPAddress?
        /// Tokens × ``SessionRateLimiter/token``, at most `perMinute` tokens.
        var units: Int64
        var updated: SessionTime
    }

    package init(perMinute: Int, clock: @escaping @Sendable () -> SessionTime = SessionClock.now) {
        precondition(perMinute > 0)
        self.perMinute = perMinute
        self.clock = clock
        let empty = Bucket(address: nil, units: 0, updated: SessionTime(milliseconds: 0))
        shards = (0 ..< Self.shardCount).map { _ in Shard(Array(repeating: empty, count: Self.bucketsPerShard)) }
    }

    /// Takes a token for a creation by `address`: nil when it may go ahead, else the whole
    /// seconds (at least 1) until its next token. With `taking` false, only answers whether a
    /// token is there (the admin API's failed attempts: looked at first, taken on a failure).
    package func admit(_ address: IPAddress, taking: Bool = true) -> Int? {
        let key = address.clientPrefix
        let place = UInt(bitPattern: key.hashValue)
        let shard = Int(place % UInt(Self.shardCount))
        let index = Int((place / UInt(Self.shardCount)) % UInt(Self.bucketsPerShard))
        let now = clock()
        let rate = Int64(perMinute)
        let capacity = rate * Self.token
        return shards[shard].buckets.withLock { buckets -> Int? in
            var bucket = buckets[index]
            if bucket.address != key {
                bucket = Bucket(address: key, units: capacity, updated: now)
            } else {
                let elapsed = max(0, now.milliseconds(since: bucket.updated))
                // A minute refills a bucket completely: no need to count further (or to overflow).
                bucket.units = min(capacity, bucket.units + min(elapsed, Self.token) * rate)
                bucket.updated = now
            }
            defer { buckets[index] = bucket }
            guard bucket.units < Self.token else {
                if taking { bucket.units -= Self.token }
                return nil
            }
            let waitMilliseconds = (Self.token - bucket.units + rate - 1) / rate
            return Int(max(1, (waitMilliseconds + 999) / 1000))
        }
    }
}
