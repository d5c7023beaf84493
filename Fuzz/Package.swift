// swift-tools-version:6.2
import PackageDescription

// homed's libFuzzer target, in a package of its own: an executable without `main`
// (libFuzzer brings it) would not link in the product's build. Build and run it
// with Scripts/fuzz.sh; by hand:
//
//     swift build -c release --package-path Fuzz --scratch-path .build-fuzz \
//         -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//     .build-fuzz/release/homed-fuzz CORPUS_COPY_DIR
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "homed-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "homed", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // The declaration of libFuzzer's driver, which the executable's main calls.
        .target(name: "CFuzzerDriver"),
        // One connection of the real daemon (router, service, an in-memory store
        // holding the demo home) driven through an EmbeddedChannel by libFuzzer.
        .executableTarget(
            name: "homed-fuzz",
            dependencies: [
                "CFuzzerDriver",
                .product(name: "HomeModel", package: "homed"),
                .product(name: "HomeServer", package: "homed"),
                .product(name: "HomeTesting", package: "homed"),
                .product(name: "HomeWire", package: "homed"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
    ]
)
