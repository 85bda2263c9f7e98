// swift-tools-version: 6.0
// What a start costs without weir's command line (issue 41): `engine-floor`
// compresses standard input (or FILE) at level 3 on two workers through the
// Weir library's public API alone (no ArgumentParser, no WeirCLI/WeirTool),
// `hello` prints a line. Both link as the weir executable does (lld, packed
// relocations, exports cut, jemalloc with weir's
// settings for engine-floor). `./measure` builds them and compares peak RSS.
import PackageDescription

// hello has no malloc_conf to export: no version script there.
func weirLinking(exports: Bool) -> [LinkerSetting] {
    [.unsafeFlags([
        "-use-ld=lld",
        "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    ] + (exports ? ["-Xlinker", "--version-script=\(Context.packageDirectory)/../../Sources/WeirTool/exports.map"] : []))]
}

let package = Package(
    name: "startup-floor",
    dependencies: [.package(name: "weir", path: "../..")],
    targets: [
        .target(name: "FloorAllocator", linkerSettings: [.linkedLibrary("jemalloc")]),
        .executableTarget(
            name: "engine-floor",
            dependencies: ["FloorAllocator", .product(name: "Weir", package: "weir")],
            linkerSettings: weirLinking(exports: true)
        ),
        .executableTarget(name: "hello", linkerSettings: weirLinking(exports: false)),
    ]
)
