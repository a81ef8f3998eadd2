#if canImport(Glibc)
import Glibc
#endif

/// Hands the memory malloc holds free back to the kernel: glibc keeps what a reload frees (the
/// old menu's many small blocks, the new file's parse) inside its heaps, where it counts as
/// resident, and returns it only at a heap's top or on `malloc_trim(3)`. Cost: one pass over
/// every arena's free blocks, each arena locked in turn (milliseconds for a few hundred MiB);
/// run after a reload, never on a request's path. No effect where glibc is not the allocator.
enum FreedMemory {
    static func release() {
        #if canImport(Glibc)
        // malloc_trim is declared in malloc.h, which the Glibc module does not import.
        if let trim = dlsym(nil, "malloc_trim") {
            _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
        }
        #endif
    }
}
