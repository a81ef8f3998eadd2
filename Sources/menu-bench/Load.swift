import ChildProcess
import Foundation
import MenuModel

/// Load time and peak memory of one config load, measured in a fresh child process so the peak
/// is the load's alone.
struct LoadFigures {
    var seconds: Double
    var peakBytes: Int
    var nodes: Int

    /// `menu-bench --load-only FILE`: loads the file, prints `seconds peakBytes nodes`.
    static func loadHere(_ path: String) -> String {
        let start = ContinuousClock.now
        let menu: Menu
        do {
            menu = try Menu(contentsOfFile: path)
        } catch {
            return "error: \(error)"
        }
        let seconds = TimingPlan.seconds(start.duration(to: .now))
        return withExtendedLifetime(menu) { "\(seconds) \(ResidentMemory.bytes("VmHWM")) \(menu.nodeCount)" }
    }

    /// Runs `menu-bench --load-only path` and reads its figures.
    static func inChildProcess(_ path: String) throws -> LoadFigures {
        let fields = try BenchChild.run(["--load-only", path], fields: 3)
        guard let seconds = Double(fields[0]), let peak = Int(fields[1]), let nodes = Int(fields[2]) else {
            throw BenchError.childFailed(fields.joined(separator: " "))
        }
        return LoadFigures(seconds: seconds, peakBytes: peak, nodes: nodes)
    }
}

/// This executable run again with other arguments, for figures a long-lived process would blur.
enum BenchChild {
    /// Runs `menu-bench arguments…` and returns the `count` whitespace-separated fields it prints.
    static func run(_ arguments: [String], fields count: Int) throws -> [String] {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let outcome = try ChildProcess.run(executable: executable, arguments: arguments, timeout: .seconds(600))
        let text = String(decoding: outcome.standardOutput, as: UTF8.self)
        let fields = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard outcome.termination == .exited(0), fields.count == count else {
            throw BenchError.childFailed(
                "menu-bench \(arguments.joined(separator: " ")) (\(outcome.termination)): \(text)"
                    + String(decoding: outcome.standardError, as: UTF8.self))
        }
        return fields
    }
}
