import Testing
@testable import WeirPipeline
@testable import WeirSystem

/// What one compression worker surely holds once the input's size is known,
/// and the refusal (with a window that fits) when a memory limit cannot hold it.
@Suite("Compression memory")
struct CompressionMemoryTests {
    static let mebibyte = 1 << 20

    /// `options` as the plan leaves them in a group of `limit` bytes.
    static func planned(_ options: CompressionOptions, limit: Int) -> CompressionOptions {
        WorkerPlan.applied(to: options, limits: ProcessLimits(onlineCores: 2, memoryLimit: limit)).options
    }

    @Test("the model follows the input's size: a 20 MB file under --long=27 is one frame of its own size")
    func sizedToTheInput() {
        let long19 = Self.planned(CompressionOptions(level: 19, longWindowLog: 27), limit: 128 << 20)
        // Measured: 111 MiB of cgroup memory; it finishes in 128 MiB.
        let peak = CompressionMemory.surePeak(long19, inputSize: 20_000_000, regularFile: true)
        #expect(peak > 90 * Self.mebibyte && peak < 128 << 20, "\(peak)")
        let long3 = Self.planned(CompressionOptions(longWindowLog: 27), limit: 64 << 20)
        // Measured: 30 MiB on 20 MB, 4 MiB on 1 MB; 284 MiB on 200 MB.
        let small = CompressionMemory.surePeak(long3, inputSize: 20_000_000, regularFile: true)
        #expect(small > 20 * Self.mebibyte && small < 40 * Self.mebibyte, "\(small)")
        #expect(CompressionMemory.surePeak(long3, inputSize: 1_000_000, regularFile: true) < 16 * Self.mebibyte)
        let large = CompressionMemory.surePeak(long3, inputSize: 200_000_000, regularFile: true)
        #expect(large > 190 * Self.mebibyte && large < 284 * Self.mebibyte, "\(large)")
        // A pipe of unknown size counts no chunk: `echo hi | weir --long=27` took 11 MiB.
        #expect(CompressionMemory.surePeak(long3, inputSize: nil, regularFile: false) < 32 * Self.mebibyte)
        // A mapped file's pages are the page cache's: --long=23 reads none.
        let mapped = Self.planned(CompressionOptions(longWindowLog: 23), limit: 64 << 20)
        #expect(CompressionMemory.surePeak(mapped, inputSize: 200_000_000, regularFile: true) < 16 * Self.mebibyte)
        // The same size from a pipe (--stream-size) is read.
        #expect(CompressionMemory.surePeak(mapped, inputSize: 200_000_000, regularFile: false) > 16 * Self.mebibyte)
    }

    @Test("in 64 MiB, --long=27 on 100 MB is refused with the window that fits; what fits is not")
    func refusal() throws {
        let options = Self.planned(CompressionOptions(longWindowLog: 27), limit: 64 << 20)
        #expect(options.memoryLimit == 64 << 20)
        let error = #expect(throws: WeirError.self) {
            try CompressionMemory.check(options, inputSize: 100_000_000, regularFile: true, path: "in")
        }
        #expect(error?.kind == .memoryLimit)
        #expect(error?.operation == .compress)
        #expect(error?.hint == .compressionMemory(longWindowLog: 23))
        #expect(error?.description.hasPrefix("in: needs at least ") == true, "\(error?.description ?? "")")
        #expect(error?.description.hasSuffix(" MiB to compress (frames of 96 MiB), "
                                            + "more than this process's memory limit of 64 MiB") == true,
                "\(error?.description ?? "")")
        // The command resolves the chunk to the window before the plan: the same advice.
        var resolved = CompressionOptions(longWindowLog: 27)
        resolved.chunkSize = resolved.resolvedChunkSize
        #expect(CompressionMemory.fittingWindow(Self.planned(resolved, limit: 64 << 20), inputSize: 100_000_000,
                                                limit: 64 << 20) == 23)
        // The advice passes the same check.
        var advised = CompressionOptions(longWindowLog: 23)
        advised.chunkSize = advised.resolvedChunkSize
        try CompressionMemory.check(Self.planned(advised, limit: 64 << 20), inputSize: 100_000_000, regularFile: true,
                                    path: "in")
        // A small file, a pipe of unknown size, and no limit at all: no refusal.
        try CompressionMemory.check(options, inputSize: 1_000_000, regularFile: true, path: "in")
        try CompressionMemory.check(options, inputSize: nil, regularFile: false, path: "in")
        var unlimited = options
        unlimited.memoryLimit = nil
        try CompressionMemory.check(unlimited, inputSize: 100_000_000, regularFile: true, path: "in")
        // The runs of the 128 MiB container test finish, and are not refused.
        for levels in [CompressionOptions(level: 19), CompressionOptions(level: 22),
                       CompressionOptions(level: 19, longWindowLog: 27)] {
            try CompressionMemory.check(Self.planned(levels, limit: 128 << 20), inputSize: 20_000_000,
                                        regularFile: true, path: "in")
        }
    }

    @Test("no smaller --long fits: the refusal advises none; a window set by --zstd=wlog= gets none either")
    func noWindowFits() {
        // -19 keeps its 64 MiB chunk under --long, whatever the window.
        let high = Self.planned(CompressionOptions(level: 19, longWindowLog: 27), limit: 64 << 20)
        #expect(CompressionMemory.fittingWindow(high, inputSize: 200_000_000, limit: 64 << 20) == nil)
        var wlog = Self.planned(CompressionOptions(longWindowLog: 27), limit: 64 << 20)
        wlog.parameters.windowLog = 27
        #expect(CompressionMemory.fittingWindow(wlog, inputSize: 200_000_000, limit: 64 << 20) == nil)
    }
}
