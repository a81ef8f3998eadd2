import Foundation
import MenuModel
import NaiveReference

/// menu-bench: the model's hot operations, config load and session memory on synthetic menus of
/// 1.1k, 111k and 1.1M nodes, against the seeds' naive tree. Prints a markdown report.
struct Options {
    static let usage = """
        usage: menu-bench [--sizes small,medium,large] [--rounds N] [--sessions N] [--data DIR]
                          [--model-only] [--smoke]
          --sizes       menus to measure: small (1.1k nodes), medium (111k), large (1.1M); default all
          --rounds      timing rounds per figure, the median is shown (default 5)
          --sessions    sessions held for the memory figure (default 100000)
          --inputs      random arguments the timed calls cycle through, a power of two (default 65536:
                        cold caches on the 1.1M menu; 16 keeps a page's data in cache)
          --data        where the generated configs are written (default Benchmarks/data)
          --model-only  skip the naive reference (its calls take seconds on the 1.1M menu)
          --smoke       smallest menu, 1 short round, 1,000 sessions: checks that it all runs
          --write-menu SIZE PATH  only write the synthetic menu of SIZE (small, medium, large) to PATH
          --handler FILE  only time MenuAPI.respond (no socket) for Benchmarks/http.sh's requests
          --availability FILE  only time availability batches and pages with unavailable rows (issue 27 §5)
          --hours FILE  only time opening hours on FILE's menu with 1,000 scheduled groups (issue 27 §3)
          --selection FILE  only time a session's selection on FILE's menu: select-all, a group, counts (issue 28 §5)
          --full-table N,N  only time a refused create (429) and a read at full session tables of N
          --translation  only time a MenuTranslation between the 1.1M menu and an edited copy, and carrying states
          --bulk        only time expand all on the 1.1M menu and pages at deep offsets after it
          --contract    only time issue 13's requests through MenuAPI.respond on the --sizes menus
                        (medium skipped): 304, expand all and deep pages, reveal, anchored pages, and
                        store memory per session after expand all and after toggles (--sessions of them)
          --search      only time search on the --sizes menus (medium skipped), CJK added to the titles:
                        the index's build and memory, scans, uncached views, cached /search and /rows?q= pages
        It runs itself in child processes as `--load-only FILE`, `--session-memory FILE N CHANGES` and
        `--store-memory FILE N KIND`.
        """

    var sizes = MenuSize.allCases
    var plan = TimingPlan(rounds: 5, roundSeconds: 0.075)
    var sessions = 100_000
    var inputs = Session.defaultInputCount
    var loadRuns = 3
    var naive = true
    var dataDirectory = "Benchmarks/data"
    var help = false
    var loadOnly: String?
    /// `--write-menu SIZE PATH`: write one synthetic menu and stop (used by Benchmarks/http.sh).
    var writeMenu: (MenuSize, String)?
    var sessionMemory: (path: String, sessions: Int, changes: Int)?
    /// `--handler FILE`: time the service's request handling alone and stop.
    var handler: String?
    /// `--availability FILE`: time availability batches and pages with unavailable rows, and stop.
    var availability: String?
    /// `--hours FILE`: time opening hours on FILE's menu, and stop.
    var hours: String?
    /// `--selection FILE`: time a selection's writes and counts on FILE's menu, and stop.
    var selection: String?
    /// `--full-table N,N`: time a refused create and a read at full session tables and stop.
    var fullTable: [Int]?
    /// `--translation`: time a reload's translation and carrying states through it, and stop.
    var translation = false
    /// `--bulk`: time expand all and pages in the expanded view, and stop.
    var bulk = false
    /// `--contract`: time issue 13's requests through the service, and stop.
    var contract = false
    /// `--search`: time search and the filtered tree, and stop.
    var search = false
    var storeMemory: (path: String, sessions: Int, kind: String)?
    let changeCounts = [0, 10, 1_000]
    let sessionChanges = 10

    init(_ arguments: [String]) throws(BenchError) {
        var rest = arguments[...]
        func value(_ flag: String) throws(BenchError) -> String {
            guard let value = rest.popFirst() else { throw .usage("\(flag) needs a value\n\(Self.usage)") }
            return value
        }
        func number(_ flag: String) throws(BenchError) -> Int {
            let text = try value(flag)
            guard let number = Int(text), number > 0 else {
                throw .usage("\(flag): expected a positive number, found \"\(text)\"")
            }
            return number
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--sizes":
                let text = try value(flag)
                var sizes: [MenuSize] = []
                for name in text.split(separator: ",") {
                    guard let size = MenuSize(rawValue: String(name)) else {
                        throw .usage("--sizes: unknown size \"\(name)\"; use small, medium, large")
                    }
                    sizes.append(size)
                }
                self.sizes = sizes
            case "--rounds": plan.rounds = try number(flag)
            case "--sessions": sessions = try number(flag)
            case "--inputs":
                inputs = try number(flag)
                guard inputs & (inputs - 1) == 0 else {
                    throw .usage("--inputs: expected a power of two, found \(inputs)")
                }
            case "--data": dataDirectory = try value(flag)
            case "--model-only": naive = false
            case "--smoke":
                sizes = [.small]
                plan = TimingPlan(rounds: 1, roundSeconds: 0.002)
                sessions = 1_000
                loadRuns = 1
            case "--load-only": loadOnly = try value(flag)
            case "--handler": handler = try value(flag)
            case "--availability": availability = try value(flag)
            case "--hours": hours = try value(flag)
            case "--selection": selection = try value(flag)
            case "--full-table":
                let text = try value(flag)
                let sizes = text.split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
                guard !sizes.isEmpty else {
                    throw .usage("--full-table: expected session counts like 100000,1000000, found \"\(text)\"")
                }
                fullTable = sizes
            case "--translation": translation = true
            case "--bulk": bulk = true
            case "--contract": contract = true
            case "--search": search = true
            case "--store-memory": storeMemory = (try value(flag), try number(flag), try value(flag))
            case "--write-menu":
                let name = try value(flag)
                guard let size = MenuSize(rawValue: name) else {
                    throw .usage("--write-menu: unknown size \"\(name)\"; use small, medium, large")
                }
                writeMenu = (size, try value(flag))
            case "--session-memory": sessionMemory = (try value(flag), try number(flag), try number(flag))
            case "--help", "-h": help = true
            default: throw .usage("unknown argument \"\(flag)\"\n\(Self.usage)")
            }
        }
    }
}

enum BenchError: Error, CustomStringConvertible {
    case childFailed(String)
    case usage(String)

    var description: String {
        switch self {
        case .childFailed(let output): "child process failed: \(output)"
        case .usage(let message): message
        }
    }
}

func progress(_ message: String) {
    FileHandle.standardError.write(Data("menu-bench: \(message)\n".utf8))
}

func run(_ options: Options) throws {
    try FileManager.default.createDirectory(atPath: options.dataDirectory, withIntermediateDirectories: true)
    let cpu =
        (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
        .split(separator: "\n").first { $0.hasPrefix("model name") }?
        .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
    let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first ?? "?"
    let overhead = options.plan.nanosecondsPerOp { $0 }
    var report = Report(
        header: "# menu-bench\n\n\(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores, "
            + "load average \(load) at start. Each figure: median of \(options.plan.rounds) round(s) of "
            + "~\(Int(options.plan.roundSeconds * 1000)) ms of thread CPU time, calls cycling through \(options.inputs) "
            + "random arguments; the harness adds \(Report.time(overhead)) per call (included). Loads: wall clock.")

    for size in options.sizes {
        progress("\(size.label): generating \(size.nodeCount) nodes")
        let spec = SyntheticMenu.spec(size)
        let path = options.dataDirectory + "/menu-\(size.rawValue).json"
        let json = SyntheticMenu.json(spec, title: "Synthetic \(size.label)")
        try Data(json).write(to: URL(fileURLWithPath: path))

        progress("\(size.label): loading in a child process ×\(options.loadRuns)")
        let runs = try (0 ..< options.loadRuns).map { _ in try LoadFigures.inChildProcess(path) }
        report.loads.append(.init(size: size, fileBytes: json.count, runs: runs))

        let menu = try Menu(contentsOfFile: path)
        precondition(menu.nodeCount == size.nodeCount)
        progress("\(size.label): \(options.sessions) sessions × \(options.sessionChanges) changes")
        let bytes = try SessionMemory.inChildProcess(path, sessions: options.sessions, changes: options.sessionChanges)
        report.sessions.append(
            .init(size: size, sessions: options.sessions, changes: options.sessionChanges, bytes: bytes))

        let naive = options.naive ? NaiveRunner(spec: spec) : nil
        for requested in options.changeCounts {
            var view = FlattenedView(menu: menu)
            let session = Session(
                menu: menu, view: &view, changes: requested, seed: UInt64(1_000 + requested), inputCount: options.inputs
            )
            naive?.flip(session)
            naive?.check(against: view, session: session)
            var naivePage: Double?
            for operation in Operation.allCases {
                progress("\(size.label): \(session.changedGroups.count) changes: \(operation.label)")
                // The naive tree has one page call: measured once, it stands against both of the model's.
                let naiveFigure =
                    operation == .visibleNodes
                    ? naivePage : naive?.measure(operation, session: session, plan: options.plan)
                if operation == .rows { naivePage = naiveFigure }
                report.operations.append(
                    .init(
                        size: size, requested: requested, changes: session.changedGroups.count, operation: operation,
                        model: ModelRunner.measure(operation, view: view, session: session, plan: options.plan),
                        naive: naiveFigure))
            }
            naive?.flip(session)
        }
    }
    print(report.markdown())
}

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    if options.help {
        print(Options.usage)
    } else if let (size, path) = options.writeMenu {
        try Data(SyntheticMenu.json(SyntheticMenu.spec(size), title: "Synthetic \(size.label)")).write(
            to: URL(fileURLWithPath: path))
    } else if let file = options.loadOnly {
        print(LoadFigures.loadHere(file))
    } else if let sizes = options.fullTable {
        print(FullTableFigures.measure(sizes: sizes, plan: options.plan))
    } else if let (path, sessions, kind) = options.storeMemory {
        print(StoreMemory.measureHere(path, sessions: sessions, kind: kind))
    } else if options.search {
        print(try SearchFigures.measure(sizes: options.sizes, plan: options.plan))
    } else if options.contract {
        print(
            try ContractFigures.measure(
                sizes: options.sizes, sessions: options.sessions, data: options.dataDirectory, plan: options.plan))
    } else if options.bulk {
        print(try BulkFigures.measure(plan: options.plan))
    } else if options.translation {
        print(try TranslationFigures.measure(plan: options.plan))
    } else if let file = options.handler {
        print(try HandlerFigures.measure(file, plan: options.plan))
    } else if let file = options.availability {
        print(try AvailabilityFigures.measure(file, plan: options.plan))
    } else if let file = options.hours {
        print(try HoursFigures.measure(file, plan: options.plan))
    } else if let file = options.selection {
        print(try SelectionFigures.measure(file, plan: options.plan))
    } else if let (path, sessions, changes) = options.sessionMemory {
        print(SessionMemory.measureHere(path, sessions: sessions, changes: changes))
    } else {
        try run(options)
    }
} catch {
    progress("\(error)")
    exit(1)
}
