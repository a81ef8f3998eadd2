#if canImport(Glibc)
import Glibc
#endif

/// Hands the memory malloc holds free back to the kernel: glibc keeps what a reload frees (the
/// old menu's many small blocks, the new file's parse) inside its heaps, where it counts as
/// resident, and returns it only at a heap's top or on `malloc_trim(3)`. Cost: one pass over
/// every arena's free blocks, each arena locked in turn (milliseconds for a few hundred MiB);
/// run after a reload, never on a request's path. No effect where glibc is not the allocator.
package enum FreedMemory {
    static func release() {
        #if canImport(Glibc)
        // malloc_trim and mallopt are declared in malloc.h, which the Glibc module does not import.
        if let trim = dlsym(nil, "malloc_trim") {
            _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
        }
        #endif
    }

    /// The block size from which malloc maps each block on its own, so that freeing it returns it
    /// to the kernel at once: 64 KiB (a large request body, a long page's buffers).
    package static let ownMappingThreshold = 64 << 10

    /// Fixes glibc's mmap threshold at ``ownMappingThreshold``. By default it rises to the largest
    /// mapped block freed so far, after which such blocks (every request body of 65 KB, say) come
    /// from the heap and, freed between sessions that stay, leave it fragmented: with 10,000
    /// sessions of 130 KB churned through a 32 MiB budget, the process held 5.3 MiB over the
    /// sessions' bytes by default and 0.7-1.3 MiB with the threshold fixed (`Benchmarks/session-memory.sh`).
    /// Call once at start-up, before other threads allocate. `MALLOC_MMAP_THRESHOLD_` in the
    /// environment wins (glibc's own tunable). No effect where glibc is not the allocator.
    package static func fixMappingThreshold() {
        #if canImport(Glibc)
        if getenv("MALLOC_MMAP_THRESHOLD_") == nil, let mallopt = dlsym(nil, "mallopt") {
            let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
            _ = unsafeBitCast(mallopt, to: (@convention(c) (Int32, Int32) -> Int32).self)(
                mmapThreshold, Int32(ownMappingThreshold))
        }
        #endif
    }
}
