import Foundation

/// The figures of one run and their markdown rendering, each target's PASS/MISS beside the figure.
struct Report {
    struct OperationFigure {
        var size: MenuSize
        /// Groups the session was asked to change, and how many the menu had to change.
        var requested: Int
        var changes: Int
        var operation: Operation
        var model: Double
        /// nil with `--model-only`.
        var naive: Double?
    }

    struct LoadFigure {
        var size: MenuSize
        var fileBytes: Int
        var runs: [LoadFigures]
    }

    struct SessionFigure {
        var size: MenuSize
        var sessions: Int
        var changes: Int
        var bytes: Int
    }

    static let scalingLimit = 1.5
    static let naiveSpeedUpFloor = 1_000.0
    static let sessionsForTarget = 100_000
    static let sessionsLimit = 150 * 1_000_000
    static let loadSecondsLimit = 2.0
    static let loadPeakLimit = 1_000_000_000

    var header: String
    var operations: [OperationFigure] = []
    var loads: [LoadFigure] = []
    var sessions: [SessionFigure] = []
    private var misses = 0
    private var passes = 0

    init(header: String) { self.header = header }

    mutating func markdown() -> String {
        var lines = [header, ""]
        lines += [
            "## Operations (ns/op, median of rounds)", "",
            "| menu | changed groups | operation | model | naive (seed) | speed-up | target |",
            "|---|---:|---|---:|---:|---:|---|"
        ]
        for figure in operations {
            lines.append(
                "| \(figure.size.label) | \(figure.changes) | \(figure.operation.label) | \(Self.time(figure.model)) | "
                    + "\(figure.naive.map(Self.time) ?? "–") | \(figure.naive.map { Self.ratio($0 / figure.model) } ?? "–") | "
                    + "\(operationTargets(figure)) |")
        }
        lines += [
            "",
            "The naive tree has one page call, `rows(offset:limit:)`; its figure stands against both of the model's."
        ]
        lines += [
            "", "## Config load + validation (child process per run)", "",
            "| menu | nodes | file | load, median of \(loads.first?.runs.count ?? 0) | peak RSS (VmHWM) | target |",
            "|---|---:|---:|---:|---:|---|"
        ]
        for load in loads {
            let seconds = median(load.runs.map(\.seconds))
            let peak = load.runs.map(\.peakBytes).max() ?? 0
            var target = ""
            if load.size == .large {
                target =
                    "≤ \(Self.loadSecondsLimit) s \(verdict(seconds <= Self.loadSecondsLimit)); "
                    + "≤ 1 GB \(verdict(peak <= Self.loadPeakLimit))"
            }
            lines.append(
                "| \(load.size.label) | \(load.runs.first?.nodes ?? 0) | \(Self.megabytes(load.fileBytes)) | "
                    + "\(String(format: "%.3f s", seconds)) | \(Self.megabytes(peak)) | \(target) |")
        }
        lines += [
            "", "## Session memory (RSS added, after malloc_trim)", "",
            "| menu | sessions | changed groups each | RSS added | per session | target |",
            "|---|---:|---:|---:|---:|---|"
        ]
        for figure in sessions {
            let perSession = Double(figure.bytes) / Double(figure.sessions)
            var target = ""
            if figure.size == .large {
                let scaled = perSession * Double(Self.sessionsForTarget)
                let note =
                    figure.sessions == Self.sessionsForTarget ? "" : " (scaled to 100k: \(Self.megabytes(Int(scaled))))"
                target = "100k ≤ 150 MB\(note) \(verdict(scaled <= Double(Self.sessionsLimit)))"
            }
            lines.append(
                "| \(figure.size.label) | \(figure.sessions) | \(figure.changes) | \(Self.megabytes(figure.bytes)) | "
                    + "\(String(format: "%.0f B", perSession)) | \(target) |")
        }
        lines += ["", "Targets: \(passes) PASS, \(misses) MISS."]
        return lines.joined(separator: "\n")
    }

    /// On the 1.1M menu: its time against the 1.1k menu's (same changes, capped there), and for
    /// a page, against the naive reference.
    private mutating func operationTargets(_ figure: OperationFigure) -> String {
        guard figure.size == .large, figure.operation != .count else { return "" }
        var targets: [String] = []
        if let small = operations.first(where: {
            $0.size == .small && $0.operation == figure.operation && $0.requested == figure.requested
        }) {
            let ratio = figure.model / small.model
            targets.append(
                "\(String(format: "%.2f", ratio))× 1.1k ≤ \(Self.scalingLimit)× \(verdict(ratio <= Self.scalingLimit))")
        }
        if figure.operation == .rows, let naive = figure.naive {
            targets.append("≥ 1000× naive \(verdict(naive / figure.model >= Self.naiveSpeedUpFloor))")
        }
        return targets.joined(separator: "; ")
    }

    private mutating func verdict(_ met: Bool) -> String {
        if met { passes += 1 } else { misses += 1 }
        return met ? "PASS" : "**MISS**"
    }

    static func time(_ nanoseconds: Double) -> String {
        switch nanoseconds {
        case ..<1_000: String(format: "%.1f ns", nanoseconds)
        case ..<1_000_000: String(format: "%.2f µs", nanoseconds / 1e3)
        case ..<1_000_000_000: String(format: "%.2f ms", nanoseconds / 1e6)
        default: String(format: "%.2f s", nanoseconds / 1e9)
        }
    }

    static func ratio(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f×", value) : String(format: "%.1f×", value)
    }

    static func megabytes(_ bytes: Int) -> String {
        bytes < 1_000_000
            ? String(format: "%.1f kB", Double(bytes) / 1e3) : String(format: "%.1f MB", Double(bytes) / 1e6)
    }
}
