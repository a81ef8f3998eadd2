import Foundation
import MenuApp

// menu-server: read settings, load the menu, start; reload the menu on SIGHUP; stop on SIGTERM/SIGINT.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("menu-server: " + message + "\n").utf8))
    exit(2)
}

let command: ServerSettings.Command
do {
    command = try ServerSettings.parse(
        arguments: Array(CommandLine.arguments.dropFirst()),
        environment: ProcessInfo.processInfo.environment)
} catch {
    fail(error.description)
}

switch command {
case .help:
    print(ServerSettings.usage)
    exit(0)
case .version:
    print(ServerSettings.version)
    exit(0)
case .healthCheck(let settings):
    do {
        print(try HealthProbe(settings: settings).check())
        exit(0)
    } catch {
        FileHandle.standardError.write(Data(("menu-server healthcheck: " + error.description + "\n").utf8))
        exit(1)
    }
case .run(let settings):
    FreedMemory.fixMappingThreshold()
    // Block the signals before libmicrohttpd starts its threads, so only sigwait sees them.
    var handledSignals = sigset_t()
    sigemptyset(&handledSignals)
    sigaddset(&handledSignals, SIGTERM)
    sigaddset(&handledSignals, SIGINT)
    sigaddset(&handledSignals, SIGHUP)
    pthread_sigmask(SIG_BLOCK, &handledSignals, nil)

    // Every line on standard error from here on goes through the log's writer thread, in --log-format.
    let log = ServerLog(format: settings.logFormat, level: settings.logLevel, quiet: settings.quiet)
    let server: RunningServer
    do {
        server = try RunningServer(settings: settings, serverLog: log)
    } catch {
        log.event(.error, error.description)
        log.stop()
        exit(2)
    }
    log.event(.info, server.sessions.description)
    log.flush()  // the start-up lines are on standard error before the listening line is on standard output
    FileHandle.standardOutput.write(Data((server.listeningLine + "\n").utf8))

    var received: Int32 = 0
    while true {
        sigwait(&handledSignals, &received)
        guard received == SIGHUP else { break }
        // Reloads run here, one at a time; requests never wait for them.
        server.reloadLogged(reason: "SIGHUP")
    }
    log.event(.info, "signal \(received), finishing requests in flight")
    server.shutdown(gracePeriod: .seconds(10))
    log.stop()
    exit(0)
}
