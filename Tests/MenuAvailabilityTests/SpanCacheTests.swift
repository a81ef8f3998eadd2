import MenuAvailability
import Testing

@Suite struct SpanCacheTests {
    @Test func aValueHoldsFromItsInstantUpToNotIncludingItsEnd() {
        let cache = SpanCache<String>()
        cache.keep("evening", from: 1_000, until: 2_000)
        #expect(cache.value(at: 999) == nil)
        #expect(cache.value(at: 1_000) == "evening")
        #expect(cache.value(at: 1_999) == "evening")
        #expect(cache.value(at: 2_000) == nil, "the next change is another span")
    }

    @Test func pastItsCapacityTheOldestGoesFirst() {
        let cache = SpanCache<Int>()
        for span in 0 ... SpanCache<Int>.capacity {
            cache.keep(span, from: Int64(span) * 10, until: Int64(span) * 10 + 10)
        }
        #expect(cache.value(at: 0) == nil, "the first span kept was replaced by the ninth")
        for span in 1 ... SpanCache<Int>.capacity { #expect(cache.value(at: Int64(span) * 10 + 5) == span) }
    }
}
