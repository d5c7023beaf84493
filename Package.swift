// swift-tools-version:6.2
import PackageDescription

/// Every target of ours builds in Swift 6 mode with warnings as errors.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
    // What a module shows of its imports is said at each import (public import,
    // internal import): a C module never leaks into a public interface.
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "homed",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "homed", targets: ["homed"]),
        .executable(name: "homectl", targets: ["homectl"]),
        .executable(name: "homed-sim", targets: ["homed-sim"]),
        .library(name: "HomeClient", targets: ["HomeClient"]),
        .library(name: "HomeModel", targets: ["HomeModel"]),
        // The daemon as a library: what the benchmarks (their own package,
        // Benchmarks/) run and compare against.
        .library(name: "HomeServer", targets: ["HomeServer"]),
        .library(name: "HomeStorage", targets: ["HomeStorage"]),
        .library(name: "HomeWire", targets: ["HomeWire"]),
        .library(name: "HomeTesting", targets: ["HomeTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        // libprotobuf-c, from Debian's libprotobuf-c-dev.
        .systemLibrary(
            name: "CProtobufC",
            pkgConfig: "libprotobuf-c",
            providers: [.apt(["libprotobuf-c-dev"])]
        ),
        // The protoc-c output for Protos/home_v1.proto, committed; nothing else.
        // Regenerate with Scripts/generate-proto.sh.
        .target(name: "CHomeProto", dependencies: ["CProtobufC"]),

        // The home model: HAP catalog, validation, the object graph, change events. No I/O.
        .target(name: "HomeModel", swiftSettings: strict),

        // Frames, the envelope and conversions between Swift values and protobuf-c messages. No sockets.
        .target(
            name: "HomeWire",
            dependencies: [
                "CHomeProto", "HomeModel",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),

        // SQLite, from Debian's libsqlite3-dev.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Persistence: the home graph and last known values in SQLite, with migrations.
        .target(name: "HomeStorage", dependencies: ["HomeModel", "CSQLite"], swiftSettings: strict),

        // Connections, dispatch, subscription fan-out, providers, the demo home.
        .target(
            name: "HomeServer",
            dependencies: [
                "HomeWire", "HomeModel", "HomeConfig",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // libsystemd, from Debian's libsystemd-dev: readiness notification and socket activation.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // homed as a system service: sd_notify, sockets passed by systemd, log lines for journald.
        .target(
            name: "HomeSystemd",
            dependencies: ["CSystemd", "HomeModel", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),

        // homed's configuration file: YAML keys checked, with the line of any mistake.
        .target(
            name: "HomeConfig", dependencies: ["HomeModel", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict),

        // The Swift client library: async calls, AsyncSequence subscriptions.
        .target(
            name: "HomeClient",
            dependencies: [
                "HomeWire", "HomeModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),

        // What tests and benchmarks share: an in-process server on a temporary
        // socket, a raw wire connection, temporary directories, generated homes.
        .target(
            name: "HomeTesting",
            dependencies: [
                "HomeServer", "HomeClient", "HomeWire", "HomeModel", "HomeStorage",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // The simulator: accessories and behaviours from a YAML file, as a provider.
        .target(
            name: "HomeSimulator",
            dependencies: [
                "HomeClient", "HomeWire", "HomeModel",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Demo/demo-home.yaml")],
            swiftSettings: strict
        ),

        .executableTarget(
            name: "homed",
            dependencies: [
                "HomeServer", "HomeWire", "HomeModel", "HomeStorage", "HomeSimulator", "HomeSystemd", "HomeConfig",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "homed-sim",
            dependencies: [
                "HomeSimulator", "HomeClient", "HomeModel",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "homectl",
            dependencies: [
                "HomeClient", "HomeModel", "HomeWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // -o yaml: the same objects as -o json, written by a YAML library.
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict
        ),

        .testTarget(
            name: "HomeSystemdTests",
            dependencies: ["HomeSystemd", "HomeModel", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // A child process for HomeSystemdTests: what HomeSystemd makes of the sockets and
        // environment systemd (or systemd-socket-activate) hands a process at start.
        .executableTarget(
            name: "systemd-probe", dependencies: ["HomeSystemd"], path: "Tests/SystemdProbe", swiftSettings: strict),
        .testTarget(name: "HomeModelTests", dependencies: ["HomeModel"], swiftSettings: strict),
        .testTarget(name: "HomeConfigTests", dependencies: ["HomeConfig", "HomeModel"], swiftSettings: strict),
        .testTarget(
            name: "HomeSimulatorTests", dependencies: ["HomeSimulator", "HomeClient", "HomeModel"],
            swiftSettings: strict),
        .testTarget(
            name: "HomeServerTests",
            dependencies: [
                "HomeServer", "HomeWire", "HomeModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HomeStorageTests",
            dependencies: ["HomeStorage", "HomeModel", "HomeServer", "HomeConfig", "HomeTesting"],
            swiftSettings: strict),
        .testTarget(
            name: "HomeWireTests",
            dependencies: [
                "HomeWire", "HomeModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HomeIntegrationTests",
            dependencies: [
                "HomeServer", "HomeClient", "HomeWire", "HomeModel", "HomeTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
    ]
)
