import Foundation
import LineLog
import Testing

@Suite struct BoundedLogQueueTests {
    @Test func aFullQueueDropsAndCountsWhatDoesNotFitAndWritesTheRestInOrder() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("queue-\(UUID().uuidString)").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)
        }
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let queue = BoundedLogQueue<Int>(capacity: 4, descriptor: descriptor) { entries, bytes in
            for entry in entries {
                if entry == 0 {  // the writer holds the first entry until the test lets it go
                    entered.signal()
                    gate.wait()
                }
                bytes.append(contentsOf: "\(entry)\n".utf8)
            }
        }
        #expect(queue.submit(0))
        entered.wait()  // the writer has taken entry 0 and waits: the buffer is empty again
        for entry in 1 ... 4 { #expect(queue.submit(entry)) }
        for entry in 5 ... 7 { #expect(!queue.submit(entry), "the buffer holds 4: entry \(entry) is dropped at once") }
        #expect(queue.dropped == 3)
        gate.signal()
        queue.stop()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "0\n1\n2\n3\n4\n")
    }
}
