import Testing
@testable import WeirPipeline

/// The chunk and window `--long` gives.
@Suite("Compression options")
struct CompressionOptionsTests {
    @Test("--long=N raises the chunk to the window (at most 1 GiB) and compresses with that window")
    func longChunk() {
        let long = CompressionOptions(threads: 2, longWindowLog: 27)
        #expect(long.resolvedChunkSize == 1 << 27)
        #expect(long.resolvedWindowLog == 27)
        #expect(
            CompressionOptions(threads: 2, longWindowLog: 20).resolvedChunkSize == CompressionOptions.defaultChunkSize)
        #expect(CompressionOptions(threads: 2, chunkSize: 1 << 29, longWindowLog: 27).resolvedChunkSize == 1 << 29)
        #expect(CompressionOptions(threads: 2, longWindowLog: 31).resolvedChunkSize == 1 << 30)
        #expect(CompressionOptions(threads: 2).resolvedWindowLog == 22)
    }

    @Test("frames get a 4 MiB window from -2 to -8; -1 and --fast keep their own, -9 and above too")
    func frameWindow() {
        for level in [2, 3, 6, 8] {
            #expect(CompressionOptions(level: level, threads: 2).resolvedWindowLog == 22, "\(level)")
        }
        for level in [-5, -1, 1, 9, 19] {
            #expect(CompressionOptions(level: level, threads: 2).resolvedWindowLog == nil, "\(level)")
        }
    }

    @Test(
        """
        the default chunk grows with the level's window: 8 MiB to -6, 16 MiB at -7 and -8, eight windows above; a \
        chunk given wins
        """
    )
    func levelChunk() {
        for level in [-5, -1, 1, 3, 6] {
            #expect(
                CompressionOptions.defaultChunkSize(level: level) == CompressionOptions.defaultChunkSize, "\(level)")
        }
        #expect(CompressionOptions.defaultChunkSize(level: 7) == 16 << 20)
        #expect(CompressionOptions.defaultChunkSize(level: 8) == 16 << 20)
        #expect(CompressionOptions.defaultChunkSize(level: 9) == 32 << 20)
        #expect(CompressionOptions.defaultChunkSize(level: 16) == 32 << 20)
        #expect(CompressionOptions.defaultChunkSize(level: 19) == 64 << 20)
        #expect(CompressionOptions.defaultChunkSize(level: 20) == 256 << 20)
        #expect(CompressionOptions.defaultChunkSize(level: 22) == CompressionOptions.largestLevelChunk)
        #expect(CompressionOptions(level: 19).chunkSize == 64 << 20)
        #expect(CompressionOptions(level: 19, chunkSize: 1 << 20).chunkSize == 1 << 20)
        // A file smaller than a chunk per worker is still cut into one per worker.
        #expect(CompressionOptions(level: 19, threads: 2).fitted(toInputSize: 100_000_000).chunkSize == 50_003_968)
    }

    @Test("a small file is never cut below the window: under it, one frame")
    func fittedNeverBelowWindow() {
        let long = CompressionOptions(threads: 2, longWindowLog: 24)
        #expect(long.fitted(toInputSize: 20 << 20).chunkSize == 1 << 24)
        #expect(long.fitted(toInputSize: 40 << 20).chunkSize == 1 << 24)
        #expect(long.fitted(toInputSize: nil).chunkSize == 1 << 24)
        // Under the window, one chunk of the file's size, in 64 KiB.
        #expect(long.fitted(toInputSize: 10 << 20).chunkSize == 10 << 20)
        #expect(long.fitted(toInputSize: 100_000).chunkSize == 128 << 10)
        #expect(long.fitted(toInputSize: 0).chunkSize == 64 << 10)
        // Without --long, a 5 MiB file is still cut in two for two workers.
        #expect(CompressionOptions(threads: 2).fitted(toInputSize: 5 << 20).chunkSize == (5 << 19))
        // From -17 not below zstd -T's job (four windows: 32 MiB at -19,
        // 128, 256, 512 MiB at -20…-22): 20 MB at -19 and 100 MB at -20…-22
        // are one frame (of their own size), 100 MB at -19 two of 50 MB,
        // 600 MiB at -21 two of 300 MiB. -16 still cuts 20 MB in two.
        #expect(CompressionOptions(level: 16, threads: 2).fitted(toInputSize: 20_000_000).chunkSize == 10_027_008)
        #expect(CompressionOptions(level: 19, threads: 2).fitted(toInputSize: 20_000_000).chunkSize == 20_054_016)
        #expect(CompressionOptions(level: 19, threads: 2).fitted(toInputSize: 100_000_000).chunkSize == 50_003_968)
        #expect(CompressionOptions(level: 20, threads: 2).fitted(toInputSize: 100_000_000).chunkSize == 100_007_936)
        #expect(CompressionOptions(level: 21, threads: 2).fitted(toInputSize: 100_000_000).chunkSize == 100_007_936)
        #expect(CompressionOptions(level: 21, threads: 2).fitted(toInputSize: 600 << 20).chunkSize == 300 << 20)
        #expect(CompressionOptions(level: 22, threads: 2).fitted(toInputSize: 100_000_000).chunkSize == 100_007_936)
        #expect(CompressionOptions(level: 22, threads: 2).fitted(toInputSize: 700 << 20).chunkSize == 512 << 20)
    }

    @Test("a --long window above the default chunk reads files instead of mapping them; --no-mmap always reads")
    func mapping() {
        #expect(CompressionOptions().resolvedMapInput)
        #expect(CompressionOptions(longWindowLog: 23).resolvedMapInput)
        #expect(!CompressionOptions(longWindowLog: 24).resolvedMapInput)
        #expect(!CompressionOptions(mapInput: false).resolvedMapInput)
    }
}
