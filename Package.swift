// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "menu-server",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "MenuModel", targets: ["MenuModel"]),
        .executable(name: "menu-server", targets: ["menu-server"]),
    ],
    targets: [
        // Pure model: the immutable menu, its config format, expansion state, the flattened view.
        .target(name: "MenuModel", swiftSettings: strict),
        // libmicrohttpd through a system-library target; only HTTPServer imports it.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // A thin HTTP server over libmicrohttpd: request value in, response value out. Knows nothing of menus.
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"], swiftSettings: strict),
        // Routing, JSON, session stores and settings: the menu service without a socket.
        .target(name: "MenuService", dependencies: ["MenuModel", "HTTPServer"], swiftSettings: strict),
        .executableTarget(name: "menu-server", dependencies: ["MenuService"], swiftSettings: strict),
        // The seeds' naive design (mutable tree, recursive walks) as a reference for tests and benchmarks.
        .target(name: "SeedMenu", dependencies: ["MenuModel"], swiftSettings: strict),
        // `swift run -c release menu-bench`: the model against the naive reference on synthetic menus.
        .executableTarget(
            name: "menu-bench", dependencies: ["MenuModel", "MenuService", "HTTPServer", "SeedMenu", "ChildProcess"],
            swiftSettings: strict),
        // libFuzzer targets for the config loader, routing/query parsing and the PUT body (scripts/fuzz).
        .target(name: "FuzzTargets", dependencies: ["MenuModel", "MenuService", "HTTPServer"], swiftSettings: strict),
        .executableTarget(name: "menu-fuzz", dependencies: ["FuzzTargets"], swiftSettings: strict),
        // Child processes over posix_spawn (Foundation's Process crashes with many descriptors open on Linux).
        .target(name: "CSpawn"),
        .target(name: "ChildProcess", dependencies: ["CSpawn"], swiftSettings: strict),
        // Test support only: a raw HTTP/1.1 client over a POSIX socket, shared by the test targets.
        .target(name: "HTTPTestSupport", swiftSettings: strict),

        .testTarget(name: "MenuModelTests", dependencies: ["MenuModel", "SeedMenu"], swiftSettings: strict),
        .testTarget(name: "ChildProcessTests", dependencies: ["ChildProcess"], swiftSettings: strict),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "MenuServiceTests", dependencies: ["MenuService", "MenuModel", "HTTPServer", "HTTPTestSupport", "SeedMenu", "ChildProcess",
                                                      "FuzzTargets"],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
