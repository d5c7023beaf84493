// swift-tools-version:6.2
import PackageDescription

// homed's benchmarks, in a package of their own so that building and testing the
// product never builds them:
//
//     swift build -c release --package-path Benchmarks
//     Benchmarks/.build/release/homed-bench --help
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "homed-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "homed", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
    ],
    targets: [
        // The floors homed is compared with: a C client and server over a Unix
        // socket, and C peers that speak homed's wire through the generated code.
        // That code is the daemon's own protoc-c output: its header is a link to
        // the committed one (CBenchFloor/home_v1.pb-c.h), and its functions come
        // from the copy HomeWire links; a second copy would be a second
        // definition of every symbol.
        .target(name: "CBenchFloor"),
        .executableTarget(
            name: "homed-bench",
            dependencies: [
                "CBenchFloor",
                .product(name: "HomeClient", package: "homed"),
                .product(name: "HomeModel", package: "homed"),
                .product(name: "HomeServer", package: "homed"),
                .product(name: "HomeStorage", package: "homed"),
                .product(name: "HomeWire", package: "homed"),
                .product(name: "HomeTesting", package: "homed"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: strict
        ),
    ]
)
