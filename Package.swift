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

        .testTarget(name: "MenuModelTests", dependencies: ["MenuModel"], swiftSettings: strict),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"], swiftSettings: strict),
        .testTarget(
            name: "MenuServiceTests", dependencies: ["MenuService", "MenuModel", "HTTPServer"],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
