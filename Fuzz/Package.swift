// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets for weir's engine, beside the main package so that its
// build, tests and warnings are untouched. Built and run by `scripts/fuzz`,
// which passes `-sanitize=fuzzer,address` and `-enable-testing`:
//
// Why `@testable import` of the engine's targets (WeirSystem, WeirFormats,
// WeirPipeline, WeirSeekable, Weir) rather than copies of their sources:
// what the fuzzers drive (the frame scanner, the seek table's check, the
// decoders) is `internal` or
// `package` there, and compiling those files into each target would need
// their C modules (CZstd, CFormats, CSupport) and swift-collections wired
// up again by hand, and would drift.
// `-enable-testing` (passed to every module by scripts/fuzz) is what a debug
// build gets anyway; here it comes with -O and the fuzzer's coverage.
let package = Package(
    name: "weir-fuzz",
    dependencies: [
        .package(name: "weir", path: ".."),
    ],
    targets: [
        // memfd, and libzstd's own decoder as the differential reference (C,
        // so the fuzz code never imports a second module map of zstd.h).
        .target(name: "CFuzzSupport", linkerSettings: [.linkedLibrary("zstd")]),
        .target(name: "FuzzSupport", dependencies: ["CFuzzSupport"]),
        .executableTarget(name: "FuzzFrameScanner", dependencies: ["FuzzSupport", .product(name: "Weir", package: "weir")]),
        .executableTarget(name: "FuzzSeekTable", dependencies: ["FuzzSupport", .product(name: "Weir", package: "weir")]),
        .executableTarget(name: "FuzzDecoder", dependencies: ["FuzzSupport", .product(name: "Weir", package: "weir")]),
        .executableTarget(name: "FuzzList", dependencies: ["FuzzSupport", .product(name: "Weir", package: "weir")]),
        .executableTarget(name: "FuzzFormats", dependencies: ["FuzzSupport", .product(name: "Weir", package: "weir")]),
        .executableTarget(name: "FuzzRoundTrip", dependencies: ["FuzzSupport", .product(name: "Weir", package: "weir")]),
    ],
    swiftLanguageModes: [.v6]
)
