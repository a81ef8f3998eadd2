import Foundation
import RedisClient
import RedisTestSupport
import Synchronization
import Testing

/// Collects a pipeline's outcomes and lets a test wait for a number of them.
private final class Outcomes: Sendable {
    private let received = Mutex<[Int: RedisPipeline.Outcome]>([:])
    private let arrived = DispatchSemaphore(value: 0)

    func completion(_ index: Int) -> @Sendable (RedisPipeline.Outcome) -> Void {
        { outcome in
            self.received.withLock { $0[index] = outcome }
            self.arrived.signal()
        }
    }

    /// Waits for `count` outcomes (30 s at most each); the outcomes by index.
    func wait(for count: Int) -> [Int: RedisPipeline.Outcome] {
        for _ in 0 ..< count { _ = arrived.wait(timeout: .now() + 30) }
        return received.withLock { $0 }
    }
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Submits a PING whose prepare step holds the pipeline's thread, as a slow round trip would,
/// and returns once it holds; signal the semaphore returned to let the batch go.
private func holdThread(
    of pipeline: RedisPipeline, then completion: @escaping @Sendable (RedisPipeline.Outcome) -> Void
) -> DispatchSemaphore {
    let holding = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    pipeline.submit(
        .arguments([bytes("PING")]),
        prepare: { _ in
            holding.signal()
            release.wait()
            return false
        }, then: completion)
    holding.wait()
    return release
}

@Suite("RedisPipeline against a real redis-server: batches without holding the submitters")
struct RedisPipelineTests {
    private let fast = RedisOptions(
        timeout: .milliseconds(300), initialBackoff: .milliseconds(200), maxBackoff: .milliseconds(400))

    @Test func commandsFromManyThreadsAreEachAnsweredOnceInSubmissionOrderPerThread() throws {
        let server = try RedisServerProcess()
        let pipeline = RedisPipeline(pool: RedisConnectionPool(endpoint: server.endpoint, options: fast))
        defer { pipeline.stop() }
        let outcomes = Outcomes()
        let threads = 8
        let perThread = 200
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0 ..< perThread {
                pipeline.submit(
                    .arguments([bytes("RPUSH"), bytes("list:\(thread)"), bytes(String(index))]),
                    then: outcomes.completion(thread * perThread + index))
            }
        }
        let received = outcomes.wait(for: threads * perThread)
        #expect(received.count == threads * perThread)
        for thread in 0 ..< threads {
            // RPUSH answers the list's length: each thread's commands ran once each, in its order.
            let lengths = (0 ..< perThread).map { index -> Int? in
                guard case .success(let answer) = received[thread * perThread + index],
                    case .integer(let length) = answer.reply
                else { return nil }
                return length
            }
            #expect(lengths == (1 ... perThread).map { $0 })
            #expect(server.command("LLEN", "list:\(thread)") == .integer(perThread))
        }
        #expect(pipeline.figures.commands == threads * perThread)
    }

    @Test func commandsSubmittedWhileABatchIsOnTheWireGoOutAsTheNextBatch() throws {
        let server = try RedisServerProcess()
        let pipeline = RedisPipeline(pool: RedisConnectionPool(endpoint: server.endpoint, options: fast))
        defer { pipeline.stop() }
        let outcomes = Outcomes()
        let firstIsBeingSent = DispatchSemaphore(value: 0)
        let letItGo = DispatchSemaphore(value: 0)
        // The first command's prepare step holds the pipeline's thread, as a slow round trip would.
        pipeline.submit(
            .arguments([bytes("INCR"), bytes("n")]),
            prepare: { _ in
                firstIsBeingSent.signal()
                letItGo.wait()
                return true
            }, then: outcomes.completion(0))
        firstIsBeingSent.wait()
        for index in 1 ... 50 {
            pipeline.submit(.arguments([bytes("INCR"), bytes("n")]), then: outcomes.completion(index))
        }
        letItGo.signal()
        let received = outcomes.wait(for: 51)
        guard case .success(let first) = received[0] else {
            Issue.record("first: \(String(describing: received[0]))")
            return
        }
        #expect(first.reply == .integer(1))
        #expect(first.prepared)
        for index in 1 ... 50 {
            guard case .success(let answer) = received[index] else {
                Issue.record("\(index): \(String(describing: received[index]))")
                continue
            }
            #expect(answer.reply == .integer(index + 1))
            #expect(!answer.prepared)
        }
        #expect(pipeline.figures.batches == 2)
        #expect(pipeline.figures.commands == 51)
    }

    @Test func aScriptRunsByItsHashAndNoScriptIsHandedBackAfterAFlush() throws {
        let server = try RedisServerProcess()
        let pipeline = RedisPipeline(pool: RedisConnectionPool(endpoint: server.endpoint, options: fast))
        defer { pipeline.stop() }
        let script = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
        let outcomes = Outcomes()
        pipeline.submit(.script(script, keys: [bytes("s")], arguments: [bytes("5")]), then: outcomes.completion(0))
        guard case .success(let first) = outcomes.wait(for: 1)[0] else {
            Issue.record("the script failed")
            return
        }
        #expect(first.reply == .integer(5))
        #expect(server.command("SCRIPT", "FLUSH") == .status("OK"))
        pipeline.submit(.script(script, keys: [bytes("s")], arguments: [bytes("5")]), then: outcomes.completion(1))
        guard case .success(let second) = outcomes.wait(for: 1)[1], case .error(let message) = second.reply else {
            Issue.record("EVALSHA after SCRIPT FLUSH did not answer an error")
            return
        }
        #expect(message.hasPrefix("NOSCRIPT"))
        #expect(server.command("GET", "s") == .bulk(bytes("5")))  // not run twice, not run blind
    }

    @Test func commandsAndScriptsEncodedBySubmittersReachRedisByteForByte() throws {
        let server = try RedisServerProcess()
        let pipeline = RedisPipeline(pool: RedisConnectionPool(endpoint: server.endpoint, options: fast))
        defer { pipeline.stop() }
        // Binary bytes (CR LF, `$`, `*`, NUL), an empty argument, one of 100,000 bytes, and counts
        // of one, two and three digits, in one batch held back until all are queued.
        let binary: [UInt8] = [0x00, 0x0D, 0x0A, 0x24, 0x2A, 0xFF]
        let large = [UInt8](repeating: 0x41, count: 100_000)
        let arguments = (0 ..< 120).map { bytes("argument \($0)") } + [binary, [], large]
        let echo = RedisScript("return {#KEYS, ARGV[#ARGV - 2], ARGV[#ARGV - 1], string.len(ARGV[#ARGV]), #ARGV}")
        let outcomes = Outcomes()
        let held = holdThread(of: pipeline, then: outcomes.completion(0))
        pipeline.submit(.arguments([bytes("SET"), binary, large]), then: outcomes.completion(1))
        pipeline.submit(.script(echo, keys: [binary, []], arguments: arguments), then: outcomes.completion(2))
        pipeline.submit(.script(echo, keys: [], arguments: arguments), then: outcomes.completion(3))
        pipeline.submit(.arguments([bytes("GET"), binary]), then: outcomes.completion(4))
        held.signal()
        let received = outcomes.wait(for: 5).mapValues { outcome in (try? outcome.get())?.reply }
        #expect(received[0] == .status("PONG"))
        #expect(received[1] == .status("OK"))
        #expect(received[2] == .array([.integer(2), .bulk(binary), .bulk([]), .integer(100_000), .integer(123)]))
        #expect(received[3] == .array([.integer(0), .bulk(binary), .bulk([]), .integer(100_000), .integer(123)]))
        #expect(received[4] == .bulk(large))
        #expect(pipeline.figures.batches == 2)
    }

    @Test func aCommandWithoutItsNameFailsAtOnceAndTheNextIsAnswered() throws {
        let server = try RedisServerProcess()
        let pipeline = RedisPipeline(pool: RedisConnectionPool(endpoint: server.endpoint, options: fast))
        defer { pipeline.stop() }
        let outcomes = Outcomes()
        pipeline.submit(.arguments([]), then: outcomes.completion(0))
        pipeline.submit(.arguments([bytes("PING")]), then: outcomes.completion(1))
        let received = outcomes.wait(for: 2)
        guard case .failure(let error) = received[0] else {
            Issue.record("an empty command was sent: \(String(describing: received[0]))")
            return
        }
        #expect(error == .protocolViolation("a command needs at least its name"))
        #expect((try? received[1]?.get())?.reply == .status("PONG"))
    }

    @Test func aFrozenRedisFailsTheBatchWithinTheTimeoutAndServiceResumesAfterwards() throws {
        let server = try RedisServerProcess()
        let pipeline = RedisPipeline(pool: RedisConnectionPool(endpoint: server.endpoint, options: fast))
        defer { pipeline.stop() }
        let outcomes = Outcomes()
        pipeline.submit(.arguments([bytes("PING")]), then: outcomes.completion(0))
        _ = outcomes.wait(for: 1)
        server.pause()
        let started = ContinuousClock.now
        for index in 1 ... 3 { pipeline.submit(.arguments([bytes("PING")]), then: outcomes.completion(index)) }
        let failed = outcomes.wait(for: 3)
        let waited = ContinuousClock.now - started
        server.resume()
        for index in 1 ... 3 {
            guard case .failure = failed[index] else {
                Issue.record("\(index) answered while Redis was stopped")
                continue
            }
        }
        #expect(waited < .seconds(5))  // bounded by the timeout, not a hang (generous for a loaded machine)
        // After the backoff the pipeline connects again by itself.
        var answered = false
        for attempt in 0 ..< 100 where !answered {
            let again = Outcomes()
            pipeline.submit(.arguments([bytes("PING")]), then: again.completion(attempt))
            if case .success(let answer) = again.wait(for: 1)[attempt], answer.reply == .status("PONG") {
                answered = true
            } else {
                usleep(50_000)
            }
        }
        #expect(answered)
    }

    @Test func stopFailsWhatIsQueuedAndEverythingSubmittedLater() throws {
        let server = try RedisServerProcess()
        let pipeline = RedisPipeline(pool: RedisConnectionPool(endpoint: server.endpoint, options: fast))
        let outcomes = Outcomes()
        let release = holdThread(of: pipeline, then: outcomes.completion(0))
        pipeline.submit(.arguments([bytes("SET"), bytes("queued"), bytes("1")]), then: outcomes.completion(1))
        let stopper = Thread { pipeline.stop() }
        stopper.start()
        usleep(50_000)  // let stop mark the pipeline stopping while the first batch is held
        release.signal()
        let received = outcomes.wait(for: 2)
        guard case .success(let first) = received[0] else {
            Issue.record("the batch on the wire was not answered")
            return
        }
        #expect(first.reply == .status("PONG"))
        pipeline.submit(.arguments([bytes("PING")]), then: outcomes.completion(2))
        let all = outcomes.wait(for: 1)
        guard case .failure = all[2] else {
            Issue.record("a command after stop was answered")
            return
        }
        // The queued SET was failed or sent, never lost without an answer; if failed, it did not run.
        if case .failure = all[1] { #expect(server.command("GET", "queued") == .null) }
    }

    @Test func aCallStillQueuedWhenTheQueueTimeoutEndsIsNeverSentAndSaysWhatWasAheadOfIt() throws {
        let server = try RedisServerProcess()
        let timeout = Duration.milliseconds(20)
        let pipeline = RedisPipeline(
            pool: RedisConnectionPool(endpoint: server.endpoint, options: fast), queueTimeout: timeout)
        defer { pipeline.stop() }
        let outcomes = Outcomes()
        let holding = DispatchSemaphore(value: 0)
        let letItGo = DispatchSemaphore(value: 0)
        // The first command's prepare step holds the pipeline's thread, as a stalled round trip would.
        pipeline.submit(
            .arguments([bytes("INCR"), bytes("held")]),
            prepare: { _ in
                holding.signal()
                letItGo.wait()
                return true
            }, then: outcomes.completion(0))
        #expect(holding.wait(timeout: .now() + 30) == .success)
        // Other callers' commands queue behind it, then a call that waits for its turn.
        for index in 1 ... 3 {
            pipeline.submit(.arguments([bytes("INCR"), bytes("queued")]), then: outcomes.completion(index))
        }
        let ran = Ran()
        var refusal: RedisError?
        do {
            try pipeline.perform { _ throws(RedisError) in ran.flag.store(true, ordering: .relaxed) }
        } catch {
            refusal = error
        }
        #expect(refusal == .queuedTooLong(waited: timeout, ahead: 4))  // the held command and the three
        #expect(
            refusal?.description.contains("queued behind 4 other commands") == true, "\(String(describing: refusal))")
        letItGo.signal()
        // The held command is answered; the three behind it had waited past the timeout too: they
        // fail unsent, each naming the commands ahead of it.
        let received = outcomes.wait(for: 4)
        guard case .success(let held) = received[0] else {
            Issue.record("the held command failed: \(String(describing: received[0]))")
            return
        }
        #expect(held.reply == .integer(1))
        for index in 1 ... 3 {
            guard case .failure(let error) = received[index] else {
                Issue.record("command \(index) was sent")
                continue
            }
            #expect(error == .queuedTooLong(waited: timeout, ahead: index))
        }
        #expect(
            server.command("EXISTS", "queued") == .integer(0), "a command that timed out in the queue reached Redis")
        // The pipeline goes on, and the call that gave up never ran.
        #expect(try pipeline.perform { _ throws(RedisError) in 7 } == 7)
        let callRan = ran.flag.load(ordering: .relaxed)
        #expect(!callRan)
    }
}

/// Whether a closure ran, for a test that expects it never did.
private final class Ran: Sendable {
    let flag = Atomic<Bool>(false)
}
