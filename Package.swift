// swift-tools-version: 6.1
import PackageDescription

// Release builds of the executable (every script's) are linked for a lean
// start (docs/design.md, "Start-up"): by lld, which packs the ~41,000
// relative relocations into a few KB (`-z pack-relative-relocs`, DT_RELR:
// glibc 2.36, Debian 12) where gold keeps 1 MB of them that ld.so reads at
// every start, and exporting only libzstd's trace hooks (exports.map)
// instead of every symbol (`-export-dynamic`, added by the static runtime).
//
// scripts/build-release also lays out together the code a start runs: it
// traces the build and links it again with `--symbol-ordering-file`.
let releaseLinking: [LinkerSetting] = [
    .unsafeFlags([
        "-use-ld=lld",
        "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
        "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/WeirTool/exports.map",
    ], .when(configuration: .release)),
]

// The WEIR_TEST_* hooks (a frame damaged, a step or a frame's decode held,
// FUSE sizes trusted, checkpoints sooner) are read from the environment only
// where WEIR_TEST_HOOKS is defined: debug builds, and the release build
// scripts/test makes for its command-line tests and power cuts, with
// WEIR_TEST_HOOKS=1 in the environment of `swift build`. The release binary
// and library users get no way to set one. The engine holds the hooks'
// settings as package fields, nil unless the executable's hooked start sets
// them, so the definition is the executable's alone: the hooked build in the
// release build's folder recompiles one module and links again, where a
// definition on every target was a second build of everything.
let testHooks: [SwiftSetting] = Context.environment["WEIR_TEST_HOOKS"] == "1"
    ? [.define("WEIR_TEST_HOOKS")] : [.define("WEIR_TEST_HOOKS", .when(configuration: .debug))]

// Every file imports the modules whose declarations it uses, members of
// extensions too (SE-0444): an import in one file no longer lends another
// file of the target an extension's members, so each file's imports say
// what it depends on, and a dependency no file imports shows.
let checkedImports: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "weir",
    products: [
        .executable(name: "weir", targets: ["WeirTool"]),
        .library(name: "Weir", targets: ["Weir"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // FileDescriptor: the descriptor type of the public API.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // `swift package generate-documentation --target Weir` (no code of it is linked).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        // XXH64 (Debian's libxxhash-dev): resume checks the kept frames at
        // hash speed against their content checksums (PartialOutputCheck).
        .systemLibrary(
            name: "CXXHash",
            pkgConfig: "libxxhash",
            providers: [.apt(["libxxhash-dev"])]
        ),
        // The other formats zstd reads and writes (--format=, .gz .xz .lzma
        // .lz4 by magic): libdeflate, ISA-L, zlib, liblz4, liblzma (Sources/WeirFormats/Formats).
        // Their headers only: the libraries are loaded at first use (CLibraries).
        .systemLibrary(
            name: "CFormats",
            providers: [.apt(["libdeflate-dev", "libisal-dev", "zlib1g-dev", "liblz4-dev", "liblzma-dev"])]
        ),
        // libfuse 3 (Debian's libfuse3-dev) for `weir mount`: the kernel's
        // FUSE, and the inline helpers for its macros (Sources/CFuse/shim.h);
        // its header only, the library loaded at first use (CLibraries).
        .systemLibrary(
            name: "CFuse",
            providers: [.apt(["libfuse3-dev"])]
        ),
        // The libraries only some commands use (libfuse 3, ISA-L, libdeflate,
        // zlib, liblz4, liblzma), loaded at their first call rather than
        // linked: mapped at every start they cost ~1 MiB of resident memory
        // (issue 82). Each function weir calls, under its own name and
        // prototype, forwards to the library's (Sources/CLibraries).
        .target(name: "CLibraries"),
        // libcurl for inputs over HTTP(S) (WeirRemote): its header from
        // Debian's libcurl4-openssl-dev, the library loaded when a URL is
        // first read, not linked (each command's start would pay for its
        // 22 libraries), with typed wrappers for its variadic calls
        // (Sources/CCurl/include/curl_loader.h).
        .target(name: "CCurl"),
        // What Swift cannot write or reach: the SIGBUS guard of mapped input
        // files (a signal handler) and thread naming (_GNU_SOURCE).
        .target(name: "CSupport"),
        // A zstd frame decoder in two phases (issue 81): blocks entropy-decoded
        // into records, then executed, so that the two run on different
        // cores: one large frame from zstd on all the workers (BlockFrame,
        // ParallelFrameDecoder); scripts/harness/zstd-split-check and
        // scripts/harness/zstd-split-fuzz hold it to libzstd. C11; XXH64 from libxxhash.
        .target(
            name: "CZstdSplit",
            dependencies: ["CXXHash"],
            cSettings: [.unsafeFlags(["-std=c11", "-O2"])]
        ),
        // The executable's allocator (jemalloc, Debian's libjemalloc-dev) and
        // its settings; only the executable links it, in release builds: the
        // debug builds are the ones run under the sanitizers, whose own
        // allocators cannot share a process with it.
        .target(name: "CAllocator", linkerSettings: [.linkedLibrary("jemalloc", .when(configuration: .release))]),
        // The engine, in layers the compiler keeps apart (docs/design.md,
        // "Layers and layout"): a target imports only those below it, and
        // what it shares upwards is `package`.
        // The system calls, the DispatchIO readers and writers, locks, and
        // the one error type.
        .target(
            name: "WeirSystem",
            dependencies: ["CSupport", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: checkedImports
        ),
        // The formats as codecs: zstd's framing and seek table, libzstd's
        // contexts, the other formats' encoders and member decoders (what
        // the fuzzers drive); no run, no pipeline.
        .target(
            name: "WeirFormats",
            dependencies: ["WeirSystem", "CZstd", "CZstdSplit", "CXXHash", "CFormats", "CLibraries"],
            swiftSettings: checkedImports
        ),
        // The tar format: headers, the walk and scanner of a tar stream,
        // member patterns, the member index's codec (docs/members.md) and
        // tar's error codes. Reading members through the seek table
        // (TarArchive, extraction) is random access, in WeirSeekable.
        .target(
            name: "WeirTar", dependencies: ["WeirSystem", "WeirFormats", "CZstd"], swiftSettings: checkedImports
        ),
        // The files a run reads and writes: input trees and lists, output
        // files and names, a stopped run's kept output.
        .target(
            name: "WeirFiles", dependencies: ["WeirSystem", "WeirFormats", "CXXHash", "CSupport"],
            swiftSettings: checkedImports
        ),
        // The pipelines (issue 83): the run every pipeline shares, the
        // compression and the decompression, the workers' and memory's
        // planning, and the option and result types they take and give.
        .target(
            name: "WeirPipeline",
            dependencies: [
                "WeirSystem", "WeirFormats", "WeirTar", "WeirFiles",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: checkedImports
        ),
        // Random access: the frames of a compressed file listed and read
        // through its seek table (`SeekableReader`, `--range`), a table and
        // member index appended (`--index`), and a `.tar.zst`'s members read
        // through them (`TarArchive`, `--member`), decoding with the pipeline.
        .target(
            name: "WeirSeekable",
            dependencies: [
                "WeirPipeline", "WeirSystem", "WeirFormats", "WeirTar", "WeirFiles",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: checkedImports
        ),
        // The engine users import, a thin face as swift-nio's `NIO` over
        // NIOCore and NIOPosix: `Compressor`, `Decompressor`, their streams
        // and background runs, and a run's jobs; it re-exports the targets
        // below it.
        .target(
            name: "Weir",
            dependencies: [
                "WeirPipeline", "WeirSeekable", "WeirSystem", "WeirFormats", "WeirTar", "WeirFiles",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: checkedImports
        ),
        // `weir mount` (docs/mount.md): an archive's tree from its member
        // index and its files' bytes through a bounded frame cache, served on
        // the kernel's FUSE. No terminal output, no exit: the tool's part.
        .target(
            name: "WeirMount",
            dependencies: [
                "Weir", "WeirSeekable", "WeirFiles", "WeirFormats", "WeirRemote", "WeirSystem", "CFuse", "CLibraries",
            ]
        ),
        // Inputs over HTTP(S) (docs/remote.md): an object read at offsets
        // through range requests, as the engine reads a file (a Descriptor
        // on a PositionalSource), or streamed into a pipe; retried, and held
        // to its first answer's identity. No terminal output, no exit.
        .target(
            name: "WeirRemote",
            dependencies: [
                "WeirSystem", "WeirFormats", "CCurl", .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: checkedImports
        ),
        // What zstd keeps in its programs/ rather than its library: -b's
        // benchmark, --trace's log, the loading of training samples. The
        // executable's side of the engine; `package` access into it.
        .target(
            name: "WeirPrograms",
            dependencies: [
                "Weir", "CZstd", "CSupport", .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: checkedImports
        ),
        .target(
            name: "WeirCLI",
            dependencies: ["Weir", "WeirPrograms"],
            swiftSettings: checkedImports
        ),
        // Every script builds it with `--static-swift-stdlib` (no toolchain
        // needed where it is installed; 3–4 MiB less resident: docs/pipes.md,
        // "The runtime linked statically").
        // The executable, named `weir` by its product; its folder's name
        // differs from the library's in more than case.
        .executableTarget(
            name: "WeirTool",
            dependencies: [
                "Weir",
                "WeirFiles",
                "WeirPrograms",
                "WeirCLI",
                "WeirMount",
                "WeirRemote",
                "WeirSystem",
                "CAllocator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            exclude: ["exports.map"],
            swiftSettings: testHooks + checkedImports,
            linkerSettings: releaseLinking
        ),
        // The library as a program of a user's uses it (Examples/WeirExample):
        // the tests run it in a container.
        .executableTarget(
            name: "WeirExample", dependencies: ["Weir"], path: "Examples/WeirExample", swiftSettings: checkedImports
        ),
        // The engine's tests, one target for each engine target: a test is
        // held to its layer, the compiler refusing it a target above the one
        // it tests. Their shared helpers are libraries of their own (in no
        // product): WeirTestSupport (inputs, scratch folders, pipes, rounds;
        // Foundation, Glibc and libzstd only), WeirFormatsTestSupport
        // (what needs WeirFormats: frames, seek tables, dictionaries), WeirTarTestSupport (member indexes
        // and a tar: what needs WeirTar) and WeirPipelineTestSupport (a file compressed as `Compressor`
        // compresses it, for the tests of the targets below Weir).
        .target(name: "WeirTestSupport", dependencies: ["CZstd"], path: "Tests/WeirTestSupport"),
        .target(
            name: "WeirFormatsTestSupport", dependencies: ["WeirFormats", "WeirTestSupport", "CZstd"],
            path: "Tests/WeirFormatsTestSupport"
        ),
        .target(name: "WeirTarTestSupport", dependencies: ["WeirTar"], path: "Tests/WeirTarTestSupport"),
        .target(
            name: "WeirPipelineTestSupport",
            dependencies: ["WeirPipeline", "WeirSystem", .product(name: "SystemPackage", package: "swift-system")],
            path: "Tests/WeirPipelineTestSupport"
        ),
        .testTarget(
            name: "WeirSystemTests",
            dependencies: [
                "WeirSystem", "WeirTestSupport", "CSupport", .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "WeirFormatsTests",
            dependencies: ["WeirFormats", "WeirSystem", "WeirTestSupport", "WeirFormatsTestSupport", "CZstd"]
        ),
        .testTarget(
            name: "WeirTarTests",
            dependencies: [
                "WeirTar", "WeirFormats", "WeirSystem", "WeirTestSupport", "WeirTarTestSupport", "CZstd",
            ]
        ),
        .testTarget(
            name: "WeirFilesTests",
            dependencies: ["WeirFiles", "WeirFormats", "WeirSystem", "WeirTestSupport", "WeirFormatsTestSupport"]
        ),
        .testTarget(
            name: "WeirPipelineTests",
            dependencies: [
                "WeirPipeline", "WeirFiles", "WeirTar", "WeirFormats", "WeirSystem", "WeirTestSupport",
                "WeirFormatsTestSupport", "WeirTarTestSupport", "WeirPipelineTestSupport", "CZstd",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "WeirSeekableTests",
            dependencies: [
                "WeirSeekable", "WeirPipeline", "WeirFiles", "WeirTar", "WeirFormats", "WeirSystem", "WeirTestSupport",
                "WeirTarTestSupport", "WeirPipelineTestSupport", "CZstd",
            ]
        ),
        .testTarget(
            name: "WeirTests",
            dependencies: [
                "Weir", "WeirPipeline", "WeirFormats", "WeirSystem", "WeirTestSupport", "WeirFormatsTestSupport",
                "CZstd",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "WeirMountTests",
            dependencies: [
                "WeirMount", "Weir", "WeirSeekable", "WeirPipeline", "WeirFormats", "WeirSystem", "WeirTar",
                "WeirTestSupport",
            ]
        ),
        .testTarget(
            name: "WeirProgramsTests",
            dependencies: ["WeirPrograms", "Weir"]
        ),
        .testTarget(
            name: "WeirRemoteTests",
            dependencies: ["WeirRemote", "WeirSystem"]
        ),
        .testTarget(
            name: "WeirToolTests",
            dependencies: ["WeirTool"]
        ),
        .testTarget(
            name: "WeirCLITests",
            dependencies: ["WeirCLI", "Weir", "WeirPrograms"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
