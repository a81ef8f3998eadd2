import Testing

@testable import HTTPCore
@testable import HTTPServer

@Suite("ResponseBodyWriter and ResponseBody: building a body without copies")
struct ResponseBodyTests {
    /// Every length from 0 to 80 goes through one of the copy paths (bytes, 4-, 8-, 16-byte word
    /// pairs, memcpy); each must copy exactly the bytes given, at the right place.
    @Test func appendsOfEveryLengthKeepEveryByteInOrder() {
        var writer = ResponseBodyWriter(capacity: 16)
        var expected: [UInt8] = []
        for length in 0 ... 80 {
            let piece = (0 ..< length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ length) }
            piece.withUnsafeBytes { writer.append($0) }
            expected += piece
        }
        #expect(writer.count == expected.count)
        #expect(writer.bytes == expected)
        #expect(writer.finish().bytes == expected)
    }

    @Test func growingPastTheInitialCapacityKeepsWhatWasWritten() {
        var writer = ResponseBodyWriter(capacity: 16)
        for byte in 0 ..< 10_000 { writer.append(UInt8(truncatingIfNeeded: byte)) }
        let body = writer.finish()
        #expect(body.count == 10_000)
        #expect(body.bytes == (0 ..< 10_000).map { UInt8(truncatingIfNeeded: $0) })
    }

    @Test func inPlaceAppendsKeepOnlyTheBytesReportedAndGrowForTheRoomAsked() {
        var writer = ResponseBodyWriter(capacity: 16)
        writer.append(atMost: 8) { target in
            for offset in 0 ..< 8 { target.storeBytes(of: UInt8(ascii: "x"), toByteOffset: offset, as: UInt8.self) }
            return 3  // scratch past the reported length is not kept
        }
        writer.append(atMost: 100) { target in
            for offset in 0 ..< 100 {
                target.storeBytes(of: UInt8(truncatingIfNeeded: offset), toByteOffset: offset, as: UInt8.self)
            }
            return 100
        }
        #expect(writer.bytes == Array("xxx".utf8) + (0 ..< 100).map { UInt8($0) })
    }

    @Test(arguments: [
        0, 1, 9, 10, 99, 100, 12_345_678, 99_999_999, 100_000_000, -1, -10, 1_234_567_890, Int.max, Int.min, Int.min + 1
    ])
    func decimalsMatchTheirDescription(value: Int) {
        var writer = ResponseBodyWriter()
        writer.append("[")
        writer.appendDecimal(value)
        writer.append("]")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[\(value)]")
    }

    @Test func aFinishedBodyIsAnImmutableCopyOfTheBytesWritten() {
        var writer = ResponseBodyWriter()
        writer.append("{\"status\":\"ok\"}")
        let body = writer.finish()
        #expect(String(decoding: body.bytes, as: UTF8.self) == #"{"status":"ok"}"#)
        #expect(body.withUnsafeBytes { $0.count } == body.count)
    }

    @Test func aResponseMadeFromABodyExposesTheSameBytes() {
        var writer = ResponseBodyWriter()
        writer.append("abc")
        let response = HTTPResponse(status: 200, body: writer.finish())
        #expect(response.body == Array("abc".utf8))
    }
}

@Suite("SpareBlock: a thread's next response body reuses the last one's memory")
struct SpareBlockTests {
    @Test func aSentBodysBlockIsTheNextWritersBlockOnTheSameThread() {
        var first = ResponseBodyWriter(capacity: 100)
        first.append("first")
        var body: ResponseBody? = first.finish()
        let address = body!.start
        body = nil  // libmicrohttpd has sent it and dropped its reference
        var second = ResponseBodyWriter(capacity: 100)
        second.append("second")
        let next = second.finish()
        #expect(next.start == address)
        #expect(next.bytes == Array("second".utf8))
    }

    @Test func aBodyThatGrewIsKeptAndTheNextLargeBodyNeedsNoGrowth() {
        var writer = ResponseBodyWriter(capacity: 16)
        for _ in 0 ..< SpareBlock.minimumSize + 630 { writer.append(UInt8(ascii: "x")) }  // a page of 8.8 KB
        var grown: ResponseBody? = writer.finish()
        let address = grown!.start
        let size = grown!.capacity
        #expect(size > SpareBlock.minimumSize + 630 && size <= SpareBlock.maximumKept)
        grown = nil
        #expect(SpareBlock.keptSize == size)
        var next = ResponseBodyWriter(capacity: 6560)  // the page's estimate, below its size
        for _ in 0 ..< SpareBlock.minimumSize + 630 { next.append(UInt8(ascii: "y")) }
        let body = next.finish()
        #expect(body.start == address)
        #expect(body.capacity == size)
        #expect(body.count == SpareBlock.minimumSize + 630)
    }

    @Test func aBodyLargerThanTheMostKeptIsFreedAndTheSlotStaysEmpty() {
        var taken = ResponseBodyWriter(capacity: 100)  // takes this thread's spare, if any
        var writer = ResponseBodyWriter(capacity: SpareBlock.maximumKept + 1)
        writer.append("large")
        var large: ResponseBody? = writer.finish()
        #expect(large!.capacity > SpareBlock.maximumKept)
        large = nil
        #expect(SpareBlock.keptSize == 0)
        taken.append("small")
        _ = taken.finish()
        #expect(SpareBlock.keptSize >= SpareBlock.minimumSize)
    }

    @Test func aSpareTooSmallForTheNextBodyIsReplacedByABlockThatFits() {
        var small = ResponseBodyWriter(capacity: 100)
        small.append("small")
        _ = small.finish()  // kept (of minimumSize, or the size an earlier test on this thread left)
        let kept = SpareBlock.keptSize
        #expect(kept >= SpareBlock.minimumSize)
        var large = ResponseBodyWriter(capacity: kept + 1)
        #expect(large.spareCapacity == kept + 1)
        #expect(SpareBlock.keptSize == 0)
        large.append("large")
        _ = large.finish()
        #expect(SpareBlock.keptSize == (kept + 1 <= SpareBlock.maximumKept ? kept + 1 : 0))
    }
}
