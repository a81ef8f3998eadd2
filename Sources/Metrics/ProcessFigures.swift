#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's CPU time and resident memory at one moment, as Prometheus's conventional
/// `process_cpu_seconds_total` and `process_resident_memory_bytes` report them.
///
/// Invariant: `cpuSeconds` is user plus system time of every thread (`getrusage(RUSAGE_SELF)`);
/// `residentBytes` the resident set from `/proc/self/statm` (0 where there is no `/proc`).
/// Cost: one system call and one small file read.
package struct ProcessFigures: Sendable {
    package var cpuSeconds: Double
    package var residentBytes: Int

    package static func now() -> ProcessFigures {
        var usage = rusage()
        _ = getrusage(RUSAGE_SELF.rawValue, &usage)
        let seconds = { (time: timeval) in Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return ProcessFigures(
            cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime), residentBytes: residentBytesFromProc())
    }

    /// The second field of `/proc/self/statm` (resident pages) times the page size.
    private static func residentBytesFromProc() -> Int {
        let descriptor = open("/proc/self/statm", O_RDONLY)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
