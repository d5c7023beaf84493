// swift-tools-version:6.2
import PackageDescription

/// homed-web is a package of its own, as Benchmarks/ is, so that building homed never
/// builds a web server; it takes HomeClient and HomeModel from the main package by path.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "homed-web",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "homed-web", targets: ["homed-web"])
    ],
    dependencies: [
        .package(name: "homed", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // Connecting to homed's socket as another uid, on the calling thread only:
        // what lets a viewer's session reach homed with the viewer's role.
        .target(name: "CWebShim"),

        // The server: homed's state as JSON, server-sent events, writes, sessions, metrics.
        .target(
            name: "HomeWeb",
            dependencies: [
                "CWebShim",
                .product(name: "HomeClient", package: "homed"),
                .product(name: "HomeModel", package: "homed"),
                .product(name: "HomeWire", package: "homed"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "homed-web",
            dependencies: [
                "HomeWeb",
                .product(name: "HomeClient", package: "homed"),
                .product(name: "HomeModel", package: "homed"),
                .product(name: "HomeWire", package: "homed"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
    ]
)
