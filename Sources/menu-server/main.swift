import Foundation
import MenuApp

// menu-server: read settings, load the menu, start; reload the menu on SIGHUP; stop on SIGTERM/SIGINT.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("menu-server: " + message + "\n").utf8))
    exit(2)
}

let command: ServerSettings.Command
do {
    command = try ServerSettings.parse(arguments: Array(CommandLine.arguments.dropFirst()),
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
    // Block the signals before libmicrohttpd starts its threads, so only sigwait sees them.
    var handledSignals = sigset_t()
    sigemptyset(&handledSignals)
    sigaddset(&handledSignals, SIGTERM)
    sigaddset(&handledSignals, SIGINT)
    sigaddset(&handledSignals, SIGHUP)
    pthread_sigmask(SIG_BLOCK, &handledSignals, nil)

    let server: MenuServer
    do {
        server = try MenuServer(settings: settings, log: { message in
            FileHandle.standardError.write(Data(("menu-server: " + message + "\n").utf8))
        })
    } catch {
        fail(error.description)
    }
    FileHandle.standardError.write(Data(("menu-server: " + server.storageDescription + "\n").utf8))
    FileHandle.standardOutput.write(Data((server.listeningLine + "\n").utf8))

    var received: Int32 = 0
    while true {
        sigwait(&handledSignals, &received)
        guard received == SIGHUP else { break }
        // Reloads run here, one at a time; requests never wait for them.
        server.reloadLogged(reason: "SIGHUP")
    }
    FileHandle.standardError.write(Data("menu-server: signal \(received), finishing requests in flight\n".utf8))
    server.shutdown(gracePeriod: .seconds(10))
    exit(0)
}
